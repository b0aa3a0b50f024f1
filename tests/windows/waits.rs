//! The waits the Windows suite synchronises on ([`crate::bench`]): a pipe read to its end in a
//! thread, a child waited for within a limit, a file waited for while its writer runs. Never a
//! bare sleep.

use std::io::Read;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::bench::HANG_LIMIT;

/// A thread reading `from` to its end, its text (`\r\n` made `\n`) sent when done.
pub fn reader(mut from: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        let _ = send.send(String::from_utf8_lossy(&bytes).replace("\r\n", "\n"));
    });
    receive
}

/// What a [`reader`] read, waited for until `end`; `None` if the pipe was still open then.
pub fn collect(from: &std::sync::mpsc::Receiver<String>, end: Instant) -> Option<String> {
    from.recv_timeout(end.saturating_duration_since(Instant::now()))
        .ok()
}

/// `child`'s exit code, waited for until `end`, when it is killed and the test fails.
pub fn wait_with_limit(child: &mut Child, end: Instant) -> Option<i32> {
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("still running after {HANG_LIMIT:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The text of `path` once it exists and is not empty, waited for up to `limit` while
/// `writer` (the process that writes it) is still running.
pub fn wait_for_file(path: &Path, limit: Duration, writer: &mut Child) -> String {
    let end = Instant::now() + limit;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        if let Some(status) = writer.try_wait().expect("wait") {
            panic!(
                "{} not written: its writer ended ({status})",
                path.display()
            );
        }
        if Instant::now() > end {
            let _ = writer.kill();
            panic!("{} not written in {limit:?}", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
