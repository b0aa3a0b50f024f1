//! The container image: `dist/Dockerfile` built by buildah (Debian's, as root: vfs storage in the
//! test's scratch directory, chroot isolation) from a build context of release archives of the
//! layout `dist/release.sh` makes, for linux/amd64 and linux/arm64, pushed to an OCI layout
//! directory and read back from it (index, manifests, configs, layers): exactly the binary at
//! /usr/local/bin/retry, the licences and /tmp, retry as the entrypoint, the platform's
//! architecture. Then the entrypoint is run with `buildah run`: the image has no loader and no
//! C library, so a dynamically linked retry (the debug and release builds of `cargo test` and
//! `.ci/run`) cannot run in it, and the run is of a small static program standing in for it,
//! linked here with `cc -static`, unless the binary under test is static itself (a
//! `dist/build.sh` build named by RETRY_TESTS_RELEASE_BINARY), which then runs.
//!
//! Podman is not used: on this development machine (a Firecracker VM) `podman run` fails in
//! crun, which cannot raise RLIMIT_NOFILE to podman's default without CAP_SYS_RESOURCE, and
//! refuses the cgroup hierarchy (v1 controllers with a v2 `unified` mount holding a controller:
//! "cgroups in hybrid mode not supported"); `buildah run` with chroot isolation needs neither.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::release::{Release, binary, members, repository};
use crate::support::{Scratch, run, tree};
use crate::tools::{self, require};

/// buildah with its storage in `scratch` (vfs), as root.
fn buildah(scratch: &Scratch) -> Command {
    let mut cmd = Command::new("buildah");
    cmd.arg("--root")
        .arg(scratch.path().join("storage"))
        .arg("--runroot")
        .arg(scratch.path().join("runroot"))
        .args(["--storage-driver", "vfs"])
        .env("BUILDAH_ISOLATION", "chroot")
        .env("TMPDIR", scratch.tmp())
        .current_dir(scratch.path());
    cmd
}

/// Runs `cmd`, asserting success; its stdout.
fn ok(cmd: Command) -> String {
    let run = run(cmd);
    assert_eq!(run.status, Some(0), "{run:#?}");
    run.stdout
}

/// Whether `bytes` is an ELF program without an interpreter (statically linked).
fn is_static_elf(bytes: &[u8]) -> bool {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 {
        return false;
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).all(|i| {
        let at = phoff + i * size;
        // PT_INTERP (3) names the dynamic loader.
        at + 4 <= bytes.len() && u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) != 3
    })
}

/// A static program that prints `stand-in for retry:` and its arguments, linked by `cc`.
fn stand_in(dir: &Path) -> Vec<u8> {
    let source = dir.join("stand-in.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\nint main(int argc, char **argv) {\n  printf(\"stand-in for retry:\");\n  \
         for (int i = 1; i < argc; i++) printf(\" %s\", argv[i]);\n  printf(\"\\n\");\n  return 0;\n}\n",
    )
    .unwrap();
    let exe = dir.join("stand-in");
    let mut cmd = Command::new("cc");
    cmd.args(["-static", "-O2", "-o"]).arg(&exe).arg(&source);
    ok(cmd);
    std::fs::read(exe).unwrap()
}

/// The OCI platform architecture of this machine.
fn host_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => panic!("no image for {other}"),
    }
}

/// A build context: the two Linux archives of version `version`, `amd64` and `arm64` as their
/// binaries.
fn context(dir: &Path, version: &str, amd64: Vec<u8>, arm64: Vec<u8>) -> PathBuf {
    for (target, bytes) in [
        ("x86_64-unknown-linux-gnu", amd64),
        ("aarch64-unknown-linux-gnu", arm64),
    ] {
        let name = format!("retry-tool-{version}-{target}");
        Release::of(version, target, &members(&name, bytes)).write_to(dir);
    }
    dir.to_path_buf()
}

/// `buildah build` of dist/Dockerfile in `context` for `platform`, tagged `tag`.
fn build(scratch: &Scratch, context: &Path, version: &str, platform: &str, tag: &str) {
    let mut cmd = buildah(scratch);
    cmd.args([
        "build",
        "--quiet",
        "--isolation",
        "chroot",
        "--platform",
        platform,
    ])
    .arg("--build-arg")
    .arg(format!("VERSION={version}"))
    .arg("-f")
    .arg(repository().join("dist/Dockerfile"))
    .args(["-t", tag])
    .arg(context);
    ok(cmd);
}

/// The JSON file `digest` (`sha256:HEX`) of the OCI layout at `oci`.
fn blob(oci: &Path, digest: &str) -> PathBuf {
    oci.join("blobs/sha256")
        .join(digest.strip_prefix("sha256:").unwrap())
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_image_holds_the_binary_and_licences_for_amd64_and_arm64_and_runs_retry_as_its_entrypoint() {
    if !cfg!(target_os = "linux") || !require(&[tools::BUILDAH]) {
        return;
    }
    if !crate::support::is_root() {
        eprintln!("skipped: buildah's vfs storage and chroot isolation are used as root here");
        return;
    }
    let scratch = Scratch::new();
    let version = env!("CARGO_PKG_VERSION");
    // This machine's architecture's image holds what can run in it: the binary under test when
    // it is static, else the static stand-in; the other architecture's holds the binary under
    // test (when it is not already in the first), so that one image is built from its bytes.
    let real = std::fs::read(binary()).unwrap();
    let (program, args, says): (Vec<u8>, &[&str], String) = if is_static_elf(&real) {
        eprintln!(
            "the image runs the binary under test, {}",
            binary().display()
        );
        (real.clone(), &["--version"], format!("retry {version}\n"))
    } else {
        eprintln!(
            "the image runs a static stand-in: {} is linked dynamically",
            binary().display()
        );
        let bytes = stand_in(&scratch.tmp());
        (
            bytes,
            &["-n", "3", "--", "true"],
            "stand-in for retry: -n 3 -- true\n".to_string(),
        )
    };
    let other = if program == real {
        b"another architecture's retry\n".to_vec()
    } else {
        real.clone()
    };
    let (amd64, arm64) = if host_arch() == "amd64" {
        (program, other)
    } else {
        (other, program)
    };
    let ctx = scratch.path().join("context");
    context(&ctx, version, amd64.clone(), arm64.clone());
    let oci = scratch.path().join("oci");
    for arch in ["amd64", "arm64"] {
        build(
            &scratch,
            &ctx,
            version,
            &format!("linux/{arch}"),
            &format!("retry-test:{arch}"),
        );
        let mut push = buildah(&scratch);
        push.args(["push", "--quiet", &format!("retry-test:{arch}")])
            .arg(format!("oci:{}:{arch}", oci.display()));
        ok(push);
    }

    let index = json(&oci.join("index.json"));
    let manifests = index["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 2, "{index}");
    for m in manifests {
        let arch = m["annotations"]["org.opencontainers.image.ref.name"]
            .as_str()
            .unwrap();
        let manifest = json(&blob(&oci, m["digest"].as_str().unwrap()));
        let config = json(&blob(&oci, manifest["config"]["digest"].as_str().unwrap()));
        assert_eq!(config["architecture"], arch, "{config}");
        assert_eq!(config["os"], "linux", "{config}");
        assert_eq!(
            config["config"]["Entrypoint"],
            serde_json::json!(["/usr/local/bin/retry"])
        );
        let labels = &config["config"]["Labels"];
        assert_eq!(
            labels["org.opencontainers.image.licenses"],
            "MIT OR Apache-2.0"
        );
        assert_eq!(labels["org.opencontainers.image.version"], version);
        // The layers, unpacked in order, are the whole file system.
        let rootfs = scratch.path().join(format!("rootfs-{arch}"));
        std::fs::create_dir(&rootfs).unwrap();
        for layer in manifest["layers"].as_array().unwrap() {
            let mut tar = Command::new("tar");
            tar.arg("-xf")
                .arg(blob(&oci, layer["digest"].as_str().unwrap()))
                .arg("-C")
                .arg(&rootfs);
            ok(tar);
        }
        assert_eq!(
            tree(&rootfs),
            [
                "tmp/",
                "usr/",
                "usr/local/",
                "usr/local/bin/",
                "usr/local/bin/retry",
                "usr/share/",
                "usr/share/doc/",
                "usr/share/doc/retry-tool/",
                "usr/share/doc/retry-tool/LICENSE-APACHE",
                "usr/share/doc/retry-tool/LICENSE-MIT",
            ],
            "{arch}"
        );
        let expected = if arch == "amd64" { &amd64 } else { &arm64 };
        assert!(
            std::fs::read(rootfs.join("usr/local/bin/retry")).unwrap() == *expected,
            "{arch}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(rootfs.join("usr/local/bin/retry"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755, "{arch}");
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert_eq!(
                std::fs::read(rootfs.join("usr/share/doc/retry-tool").join(licence)).unwrap(),
                std::fs::read(repository().join(licence)).unwrap()
            );
        }
    }

    // The entrypoint, run in a container of this machine's architecture's image.
    let mut from = buildah(&scratch);
    from.args(["from", "--quiet", &format!("retry-test:{}", host_arch())]);
    let container = ok(from).trim().to_string();
    let mut inside = buildah(&scratch);
    inside
        .args([
            "run",
            "--isolation",
            "chroot",
            &container,
            "--",
            "/usr/local/bin/retry",
        ])
        .args(args);
    let said = ok(inside);
    let mut rm = buildah(&scratch);
    rm.args(["rm", &container]);
    ok(rm);
    assert_eq!(said, says);
    let _ = std::fs::remove_dir_all(scratch.tmp());
    std::fs::create_dir(scratch.tmp()).unwrap();
}
