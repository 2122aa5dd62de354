//! The dashboard's static files, compiled into the binary: vendored htmx
//! (`assets/README.md` says where it came from) and the stylesheet.
//!
//! Both are served under names that change when their content does (htmx
//! by version, the stylesheet by a hash of its bytes), so browsers may keep
//! them for a year (`immutable`) and still never run a stale copy.

use std::sync::OnceLock;

use axum::{
    extract::Path,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

use super::error::DashError;

/// The vendored htmx file's name, as served.
pub const HTMX_FILE: &str = "htmx-2.0.11.min.js";
const HTMX: &[u8] = include_bytes!("../../assets/htmx-2.0.11.min.js");
const CSS: &[u8] = include_bytes!("../../assets/dashboard.css");

struct Asset {
    name: String,
    etag: HeaderValue,
    bytes: &'static [u8],
    content_type: &'static str,
}

fn digest(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..6])
}

fn assets() -> &'static [Asset; 2] {
    static ASSETS: OnceLock<[Asset; 2]> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let asset = |name: String, bytes: &'static [u8], content_type| Asset {
            etag: HeaderValue::from_str(&format!("\"{}\"", digest(bytes)))
                .expect("hex is a valid header value"),
            name,
            bytes,
            content_type,
        };
        [
            asset(HTMX_FILE.to_owned(), HTMX, "text/javascript; charset=utf-8"),
            asset(
                format!("dashboard-{}.css", digest(CSS)),
                CSS,
                "text/css; charset=utf-8",
            ),
        ]
    })
}

/// The URL of htmx.
pub fn htmx_url() -> String {
    format!("/dashboard/assets/{}", assets()[0].name)
}

/// The URL of the stylesheet (its name carries a hash of its content).
pub fn css_url() -> String {
    format!("/dashboard/assets/{}", assets()[1].name)
}

/// `GET /dashboard/assets/{file}`. No sign-in needed: nothing here is a
/// project's data.
pub async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Result<Response, DashError> {
    let asset = assets()
        .iter()
        .find(|a| a.name == file)
        .ok_or_else(|| DashError::NotFound(format!("no asset {file:?}")))?;
    let cache = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ),
        (header::ETAG, asset.etag.clone()),
    ];
    if headers.get(header::IF_NONE_MATCH) == Some(&asset.etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        )],
        cache,
        asset.bytes,
    )
        .into_response())
}
