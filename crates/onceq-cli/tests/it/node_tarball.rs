//! The npm package as a user gets it: `npm pack` in clients/node, the
//! tarball installed into a scratch project (`npm install ./onceq-….tgz`
//! beside pg and express from the registry, npm's cache preferred), then
//! - a TypeScript file importing `onceq` and `onceq/express` type-checks
//!   with `tsc --strict` (the declarations resolve through `exports`), and
//! - the example's route and worker, copied into the scratch project, run a
//!   smaller seed story on the installed package: a double tap, the 422,
//!   one export per key.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::{Value, json};

use crate::exports_node::{self, App, Story};
use crate::node_package;
use crate::process::ServerProcess;

/// Runs `npm args` in `dir`; its stdout.
fn npm(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("npm must be installed");
    assert!(
        out.status.success(),
        "npm {args:?} in {} failed:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `npm pack` into `dest`; the tarball and the files it holds.
fn pack(package: &Path, dest: &Path) -> (PathBuf, Vec<String>) {
    let out = npm(
        package,
        &[
            "pack",
            "--json",
            "--silent",
            "--pack-destination",
            dest.to_str().unwrap(),
        ],
    );
    // prepack's build may print before the JSON: it is the last array.
    let json = &out[out.rfind("\n[").map_or(0, |i| i + 1)..];
    let packed: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {out}"));
    let entry = &packed[0];
    let files = entry["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    (dest.join(entry["filename"].as_str().unwrap()), files)
}

/// A devDependency's range in clients/node/package.json (the scratch
/// project asks for the same, so npm's cache has it).
fn range(manifest: &Value, name: &str) -> String {
    manifest["devDependencies"][name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} is no devDependency of the package"))
        .to_owned()
}

const CHECK_TS: &str = r#"import express from "express";
import pg from "pg";
import { Client, OnceqError, Worker, migrate, type Job } from "onceq";
import { idempotency } from "onceq/express";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const client = new Client({ baseUrl: "http://127.0.0.1:8787", apiKey: "key" });
await migrate(pool);

const app = express();
app.post("/api/exports", idempotency({ pool, leaseMs: 30_000 }), async (req, res) => {
  const key: string | undefined = req.idempotencyKey;
  const { message } = await client.publish("api-enqueue-jobs", req.body, { idempotencyKey: key });
  res.status(202).json({ status: "queued", message_id: message.message_id });
});

const worker = new Worker({
  client,
  pool,
  queue: "api-enqueue-jobs",
  concurrency: 4,
  async handler(job: Job, tx: pg.PoolClient) {
    await tx.query("INSERT INTO exports (job_fact) VALUES ($1)", [job.fact]);
  },
});
const stopped: Promise<void> = worker.stop();
const failure = (e: unknown): string | undefined => (e instanceof OnceqError ? e.code : undefined);

// The declarations are real types, not `any`: each of these must be an error.
// @ts-expect-error baseUrl is a string
new Client({ baseUrl: 8787, apiKey: "key" });
// @ts-expect-error the worker needs a queue
new Worker({ client, pool, handler: () => {} });
// @ts-expect-error leaseMs is a number of milliseconds
idempotency({ pool, leaseMs: "30s" });

export { app, failure, stopped };
"#;

const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "strict": true,
    "target": "es2022",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "noEmit": true,
    "types": ["node"]
  },
  "files": ["check.ts"]
}
"#;

/// The scratch project: the tarball, pg, express, and what type-checks
/// TypeScript against them; the example's scripts copied in.
fn scratch_project(dir: &Path, tarball: &Path, manifest: &Value) {
    let package = json!({
        "name": "onceq-tarball-check",
        "private": true,
        "type": "module",
        "dependencies": {
            "onceq": format!("file:{}", tarball.display()),
            "express": range(manifest, "express"),
            "pg": range(manifest, "pg"),
        },
        "devDependencies": {
            "typescript": range(manifest, "typescript"),
            "@types/express": range(manifest, "@types/express"),
            "@types/node": range(manifest, "@types/node"),
            "@types/pg": range(manifest, "@types/pg"),
        }
    });
    std::fs::write(
        dir.join("package.json"),
        serde_json::to_string_pretty(&package).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("check.ts"), CHECK_TS).unwrap();
    std::fs::write(dir.join("tsconfig.json"), TSCONFIG).unwrap();
    let example = exports_node::example_dir();
    for f in ["api.mjs", "worker.mjs", "exports.sql"] {
        std::fs::copy(example.join(f), dir.join(f)).unwrap();
    }
    std::fs::create_dir(dir.join("lib")).unwrap();
    for f in std::fs::read_dir(example.join("lib")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.join("lib").join(f.file_name())).unwrap();
    }
    npm(
        dir,
        &[
            "install",
            "--prefer-offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_packed_tarball_installs_type_checks_and_runs_the_seed_story() {
    let scratch = tempfile::tempdir().unwrap();
    let (tarball, files) = {
        let _package = node_package::PACKAGE.lock().await;
        let package = node_package::build_package();
        pack(&package, scratch.path())
    };
    for needed in [
        "package.json",
        "README.md",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/express.js",
        "dist/express.d.ts",
        "dist/hono.js",
        "sql/ledger/postgres/claim.sql",
        "sql/job_fact/postgres/claim.sql",
    ] {
        assert!(
            files.iter().any(|f| f == needed),
            "the tarball lacks {needed}: {files:?}"
        );
    }
    assert!(
        !files.iter().any(|f| f.starts_with("src/")
            || f.starts_with("test/")
            || f.starts_with("node_modules/")),
        "the tarball carries sources or tests: {files:?}"
    );

    let project = scratch.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(node_package::package_dir().join("package.json")).unwrap(),
    )
    .unwrap();
    scratch_project(&project, &tarball, &manifest);
    assert!(
        project.join("node_modules/onceq/dist/index.js").is_file()
            && !project.join("node_modules/onceq").is_symlink(),
        "onceq is not installed from the tarball"
    );

    let tsc = Command::new("node")
        .args(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"])
        .current_dir(&project)
        .output()
        .expect("node must be installed");
    assert!(
        tsc.status.success(),
        "check.ts does not type-check against the installed package:\n{}{}",
        String::from_utf8_lossy(&tsc.stdout),
        String::from_utf8_lossy(&tsc.stderr)
    );

    // The seed's story, smaller, on the installed package.
    let queue_db = onceq_testdb::fresh_database().await;
    let app_db = onceq_testdb::fresh_database().await;
    let key = "tarball-key";
    let server = ServerProcess::on_postgres(&queue_db.url, key, &[]);
    let app = App::new(project, &server, key, &app_db.url);
    let db = exports_node::connect(&app_db.url).await;
    let (_api, base) = app.start_api();
    let _worker = app.spawn("worker.mjs", "worker", &[("EXPORTS_LOG", "debug")]);
    let story = Story::new(base);
    story
        .double_tap("exp_tarball", &json!({"tenant": "acme", "format": "csv"}))
        .await;
    story.refusals("exp_tarball").await;
    let facts = ["export:exp_tarball".to_owned()];
    let built = exports_node::drained(&db, &server, key, &facts).await;
    assert_eq!(
        built.into_iter().collect::<Vec<_>>(),
        vec![("export:exp_tarball".to_owned(), 1)]
    );
}
