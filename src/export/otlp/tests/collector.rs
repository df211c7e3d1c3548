//! A scripted OTLP/HTTP receiver on 127.0.0.1 for the exporter tests:
//! records every request and answers from a script (then 200). Bounded:
//! it stops when dropped, and never lives longer than `MAX_LIFETIME`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MAX_LIFETIME: Duration = Duration::from_secs(60);

#[derive(Clone, Debug)]
pub enum Reply {
    /// Status, extra headers, body.
    Answer(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Wait, then answer 200.
    Slow(Duration),
    /// Read the request, never answer (until the collector stops).
    Hang,
}

impl Reply {
    pub fn status(code: u16) -> Reply {
        Reply::Answer(code, Vec::new(), Vec::new())
    }
    pub fn status_body(code: u16, body: &str) -> Reply {
        Reply::Answer(code, Vec::new(), body.as_bytes().to_vec())
    }
}

#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Inner {
    script: Mutex<Vec<Reply>>,
    fallback: Reply,
    received: Mutex<Vec<Received>>,
    stop: AtomicBool,
}

pub struct Collector {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

impl Collector {
    pub fn start(script: Vec<Reply>) -> Collector {
        Self::start_on(
            TcpListener::bind("127.0.0.1:0").expect("bind"),
            script,
            Reply::status(200),
        )
    }

    /// Every request gets `reply`.
    pub fn always(reply: Reply) -> Collector {
        Self::start_on(
            TcpListener::bind("127.0.0.1:0").expect("bind"),
            Vec::new(),
            reply,
        )
    }

    pub fn start_on(listener: TcpListener, script: Vec<Reply>, fallback: Reply) -> Collector {
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let inner = Arc::new(Inner {
            script: Mutex::new(script.into_iter().rev().collect()),
            fallback,
            received: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let serving = Arc::clone(&inner);
        let thread = std::thread::spawn(move || {
            let born = Instant::now();
            let mut conns = Vec::new();
            while !serving.stop.load(Ordering::Relaxed) && born.elapsed() < MAX_LIFETIME {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let inner = Arc::clone(&serving);
                        conns.push(std::thread::spawn(move || serve(stream, &inner)));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
            for c in conns {
                let _ = c.join();
            }
        });
        Collector {
            addr,
            inner,
            thread: Some(thread),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }

    /// Polls until `n` requests arrived or `within` passed.
    pub fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let until = Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n || Instant::now() >= until {
                return got;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, inner: &Inner) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let born = Instant::now();
    let mut buf: Vec<u8> = Vec::new();
    // Read the head, then Content-Length bytes of body.
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if !read_some(&mut stream, &mut buf, inner, born) {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + 4 + len {
        if !read_some(&mut stream, &mut buf, inner, born) {
            return;
        }
    }
    let body = buf[head_end + 4..head_end + 4 + len].to_vec();
    inner.received.lock().unwrap().push(Received {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    });
    let reply = inner
        .script
        .lock()
        .unwrap()
        .pop()
        .unwrap_or_else(|| inner.fallback.clone());
    let (status, extra, body) = match reply {
        Reply::Answer(s, h, b) => (s, h, b),
        Reply::Slow(d) => {
            sleep_unless_stopped(d, inner, born);
            (200, Vec::new(), Vec::new())
        }
        Reply::Hang => {
            sleep_unless_stopped(MAX_LIFETIME, inner, born);
            return;
        }
    };
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&body);
    let _ = stream.flush();
}

fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>, inner: &Inner, born: Instant) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if inner.stop.load(Ordering::Relaxed) || born.elapsed() > MAX_LIFETIME {
            return false;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                continue
            }
            Err(_) => return false,
        }
    }
}

fn sleep_unless_stopped(d: Duration, inner: &Inner, born: Instant) {
    let until = Instant::now() + d;
    while Instant::now() < until
        && !inner.stop.load(Ordering::Relaxed)
        && born.elapsed() < MAX_LIFETIME
    {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
