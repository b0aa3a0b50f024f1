//! The one-line ways to get retry (issue 35), tested against release files of the layout
//! `dist/release.sh` makes, served by a local HTTP server on 127.0.0.1:
//!
//! - `dist/install.sh` (`script`): under dash, bash, BusyBox's ash with BusyBox's tools, and
//!   zsh's sh mode; installs, refuses and fails as docs/install.md says, leaving nothing behind;
//! - the GitHub Action (`action`): `action.yml`'s step for Linux and macOS runners, run as a
//!   runner runs it (`RUNNER_OS`, `RUNNER_ARCH`, `RUNNER_TOOL_CACHE`, `GITHUB_PATH`,
//!   `GITHUB_OUTPUT`), the tool cache, the `::error::` lines;
//! - what an adversary can send or pass (`adversarial`): trickles, redirects, cut and
//!   malformed downloads, archives with `..` and links, shell metacharacters;
//! - each downloader (curl, GNU wget, BusyBox's wget: `downloaders`) against an https://
//!   server that redirects to http:// (`downgrade`); installs at once, a file that cannot be
//!   replaced, a TERM among the renames (`replace`); the one-line messages of odd paths, a
//!   missing TMPDIR, an archive tar cannot read, a password in the URL (`messages`);
//!   `dist/release.sh` on a machine without a target's linker (`release_tools`);
//! - the container image (`image`): `dist/Dockerfile` built by buildah and read back from an
//!   OCI layout, and its entrypoint run by `buildah run`;
//! - the documentation's one-liners run as written (`docs`), and shellcheck and actionlint
//!   (`lint`).
//!
//! Unix only, as the scripts. The action's Windows step (`dist/action/install.ps1`) has no
//! PowerShell here: the release workflow runs it on windows-latest.
#![cfg(unix)]

use std::time::Duration;

#[path = "../common/tools.rs"]
mod tools;

mod action;
mod adversarial;
mod docs;
mod downgrade;
mod downloaders;
mod image;
mod lint;
mod messages;
mod release;
mod release_tools;
mod replace;
mod script;
mod script_failures;
mod server;
mod support;

/// Every run and every server thread is stopped after this long.
pub const HANG_LIMIT: Duration = Duration::from_secs(60);
