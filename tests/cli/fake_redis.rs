//! Tiny hostile Redis servers on a free loopback port, for the budget store's tests: one that
//! never answers, one that answers a byte at a time, one that answers every command with fixed
//! bytes. Each connection is served by a thread of its own; the listener stops accepting when
//! the server is dropped. Every server counts the commands it was sent (one per read that
//! brought bytes: retry sends each command in one write).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// What a fake server does with what it is sent.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// Reads everything, answers nothing.
    Silent,
    /// Answers each command with the start of a bulk string of a million bytes, then one more
    /// byte every `interval`, forever: a reply that never ends.
    Drip {
        /// Between two bytes.
        interval: Duration,
    },
    /// Answers each command with these bytes.
    Reply(Vec<u8>),
}

/// A fake server, stopped when dropped.
pub struct FakeRedis {
    port: u16,
    stop: Arc<AtomicBool>,
    commands: Arc<AtomicUsize>,
}

impl FakeRedis {
    /// Starts a server doing `behaviour` on 127.0.0.1 and a free port.
    pub fn start(behaviour: Behaviour) -> FakeRedis {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let commands = Arc::new(AtomicUsize::new(0));
        let (stop2, commands2) = (Arc::clone(&stop), Arc::clone(&commands));
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (b, c, s) = (behaviour.clone(), Arc::clone(&commands2), stop2.clone());
                        std::thread::spawn(move || serve(stream, &b, &c, &s));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        FakeRedis {
            port,
            stop,
            commands,
        }
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Commands received so far.
    pub fn commands(&self) -> usize {
        self.commands.load(Ordering::Relaxed)
    }
}

impl Drop for FakeRedis {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(mut stream: TcpStream, behaviour: &Behaviour, commands: &AtomicUsize, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 65536];
    while !stop.load(Ordering::Relaxed) {
        let n = match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return,
        };
        let _ = n;
        commands.fetch_add(1, Ordering::Relaxed);
        match behaviour {
            Behaviour::Silent => {}
            Behaviour::Reply(bytes) => {
                if stream.write_all(bytes).is_err() {
                    return;
                }
            }
            Behaviour::Drip { interval } => {
                if stream.write_all(b"$1000000\r\n").is_err() {
                    return;
                }
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(*interval);
                    if stream.write_all(b"x").is_err() {
                        return;
                    }
                }
            }
        }
    }
}
