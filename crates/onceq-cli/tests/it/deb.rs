//! The Debian package: scripts/build-deb packages the binary under test
//! (cargo-deb, no rebuild, quick compression), `dpkg -i` installs it, and the server serves
//! afterwards as the unit would run it: the unit's ExecStart as its User
//! with its Environment and EnvironmentFile, in its WorkingDirectory, with
//! no new privileges. There is no systemd as PID 1 on these machines, so
//! the test reads the installed unit and does what systemd would. Then
//! `dpkg --purge` removes the user, the data and the settings.
//! `systemd-analyze verify` checks the unit as systemd reads it.
//!
//! dpkg is one per machine: tests in other processes (a second run)
//! wait on a file lock, and the package is purged even when a check fails.

use std::{
    collections::BTreeMap,
    fs::File,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

use serde_json::Value;

use crate::process::run_ok;

const KEY: &str = "deb-test-key";

#[track_caller]
fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Holds dpkg for this test; purges the package when dropped.
struct Installed {
    _lock: File,
}

impl Installed {
    fn install(deb: &Path) -> Self {
        let lock = File::create(std::env::temp_dir().join("onceq-deb-test.lock")).unwrap();
        lock.lock().unwrap();
        // A run that died half-way may have left it installed.
        purge();
        sh("dpkg", &["--install", deb.to_str().unwrap()]);
        Self { _lock: lock }
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        purge();
    }
}

fn purge() {
    let _ = Command::new("dpkg")
        .args(["--purge", "onceq"])
        .stdout(Stdio::null())
        .output();
}

/// Builds the .deb from the binary cargo test built: its profile's
/// directory holds it, so cargo-deb packages it without building.
fn build_deb(out: &Path) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_onceq"));
    let profile_dir = bin.parent().unwrap();
    let profile = match profile_dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev".to_owned(),
        other => other.to_owned(),
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-deb");
    let built = Command::new(script)
        .env("PROFILE", &profile)
        .env("OUT", out)
        .env("FAST", "1")
        .env("CARGO_TARGET_DIR", profile_dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "scripts/build-deb failed:\n{}\n{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    let debs: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "{debs:?}");
    debs.into_iter().next().unwrap()
}

/// The `[Service]` settings of a unit file; a repeated key's values in
/// order (as systemd applies them).
fn service_section(unit: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings = BTreeMap::<String, Vec<String>>::new();
    let mut in_service = false;
    for line in unit.lines().map(str::trim) {
        if line.starts_with('[') {
            in_service = line == "[Service]";
        } else if in_service && !line.is_empty() && !line.starts_with(['#', ';']) {
            let (k, v) = line.split_once('=').unwrap();
            settings
                .entry(k.trim().into())
                .or_default()
                .push(v.trim().into());
        }
    }
    settings
}

/// KEY=VALUE lines as systemd's EnvironmentFile= reads them (comments and
/// blank lines skipped, one level of quotes removed).
fn environment_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            (k.trim().to_owned(), v.to_owned())
        })
        .collect()
}

fn one<'a>(service: &'a BTreeMap<String, Vec<String>>, key: &str) -> &'a str {
    service
        .get(key)
        .and_then(|v| v.last())
        .unwrap_or_else(|| panic!("no {key}= in the unit"))
}

#[test]
fn deb_installs_a_unit_that_serves_as_onceq_and_purges_clean() {
    assert!(
        std::fs::metadata("/proc/self").unwrap().uid() == 0,
        "the .deb test installs a package with dpkg: run it as root (scripts/test, CI)"
    );
    let began = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let deb = build_deb(out.path());
    let built = began.elapsed();
    let installed = Installed::install(&deb);

    // What the package put where.
    assert!(Path::new("/usr/bin/onceq").is_file());
    let conffiles = sh(
        "dpkg-query",
        &["--showformat", "${Conffiles}", "--show", "onceq"],
    );
    assert!(conffiles.contains("/etc/onceq/onceq.env"), "{conffiles}");
    let env_path = Path::new("/etc/onceq/onceq.env");
    assert_eq!(std::fs::metadata(env_path).unwrap().mode() & 0o777, 0o600);
    let passwd = sh("getent", &["passwd", "onceq"]);
    let uid: u32 = passwd.split(':').nth(2).unwrap().parse().unwrap();
    assert!(uid < 1000, "a system user: {passwd}");
    let data = std::fs::metadata("/var/lib/onceq").unwrap();
    assert_eq!((data.uid(), data.mode() & 0o777), (uid, 0o750));

    let unit_path = [
        "/lib/systemd/system/onceq.service",
        "/usr/lib/systemd/system/onceq.service",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("the unit is installed");
    // systemd's own reading of the unit; an unknown or misspelt setting is
    // only a warning there, so any word from it fails the test.
    let verify = Command::new("systemd-analyze")
        .args(["verify", unit_path])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success() && said.trim().is_empty(), "{said}");
    let service = service_section(&std::fs::read_to_string(unit_path).unwrap());
    assert_eq!(one(&service, "User"), "onceq");
    assert_eq!(one(&service, "NoNewPrivileges"), "yes");
    assert_eq!(one(&service, "ProtectSystem"), "strict");

    // The administrator's edits to the conffile, which an upgrade (the
    // same package again) keeps.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let edited = std::fs::read_to_string(env_path).unwrap().replace(
        "ONCEQ_LISTEN=127.0.0.1:8787",
        &format!("ONCEQ_LISTEN=127.0.0.1:{port}"),
    ) + &format!("ONCEQ_API_KEY={KEY}\n");
    std::fs::write(env_path, &edited).unwrap();
    sh(
        "dpkg",
        &["--install", "--force-confold", deb.to_str().unwrap()],
    );
    assert_eq!(std::fs::read_to_string(env_path).unwrap(), edited);

    // What systemd does with the unit: Environment=, then the
    // EnvironmentFile's values over it, ExecStart as User in
    // WorkingDirectory with no new privileges.
    let mut env: Vec<(String, String)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
    for e in service.get("Environment").into_iter().flatten() {
        let (k, v) = e.split_once('=').unwrap();
        env.push((k.into(), v.into()));
    }
    let file = one(&service, "EnvironmentFile");
    env.extend(environment_file(
        &std::fs::read_to_string(file.trim_start_matches('-')).unwrap(),
    ));
    let exec: Vec<&str> = one(&service, "ExecStart").split_whitespace().collect();
    let user = one(&service, "User");
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--reuid",
        user,
        "--regid",
        one(&service, "Group"),
        "--init-groups",
        "--no-new-privs",
        "--",
    ])
    .args(&exec)
    .current_dir(one(&service, "WorkingDirectory"))
    .env_clear()
    .envs(env);
    let server = crate::process::ServerProcess::spawn_waiting(cmd);
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let uids = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(
        uids.split_whitespace()
            .skip(1)
            .all(|u| u == uid.to_string()),
        "{uids}"
    );

    let url = format!("http://127.0.0.1:{port}");
    assert_eq!(server.url, url, "it listens where the settings file says");
    let env = [("ONCEQ_URL", url.as_str()), ("ONCEQ_API_KEY", KEY)];
    run_ok(&["publish", "jobs", r#"{"n": 1}"#], &env);
    let got: Value =
        serde_json::from_str(&run_ok(&["consume", "jobs", "--ack", "--json"], &env)).unwrap();
    assert_eq!(got[0]["payload"]["n"], 1, "{got}");
    // Its store is in the data directory, owned by onceq.
    let files: Vec<_> = std::fs::read_dir("/var/lib/onceq")
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap())
        .collect();
    assert!(!files.is_empty() && files.iter().all(|m| m.uid() == uid));

    let (clean, logs) = server.terminate();
    assert!(clean, "SIGTERM drains and exits 0: {logs:?}");

    drop(installed);
    assert!(
        !Path::new("/var/lib/onceq").exists(),
        "purge removes the data"
    );
    assert!(!Path::new("/etc/onceq").exists(), "and the settings");
    assert!(!Path::new("/usr/bin/onceq").exists());
    let user_left = Command::new("getent")
        .args(["passwd", "onceq"])
        .output()
        .unwrap();
    assert!(!user_left.status.success(), "and the user");
    eprintln!(
        "deb test: package built in {built:?}, {:?} in all",
        began.elapsed()
    );
}
