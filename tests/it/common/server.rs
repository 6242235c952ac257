//! A `urinorm serve` run as a child process, and an HTTP client for it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running server: its child process, its address, and what it has
/// written to standard error so far.
pub struct Server {
    child: Child,
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `urinorm serve --seen STORE --listen 127.0.0.1:0 ARGS…`, once it
    /// says where it listens.
    pub fn start(store: &str, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_urinorm"))
            .args(["serve", "--seen", store, "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut said = String::new();
        let addr = loop {
            let Some(Ok(line)) = lines.next() else {
                panic!("the server stopped before listening: {said}");
            };
            if let Some(addr) = line.strip_prefix("urinorm: listening on ") {
                break addr.to_string();
            }
            said.push_str(&line);
            said.push('\n');
        };
        let stderr = Arc::new(Mutex::new(said));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut kept = kept.lock().unwrap();
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        Server {
            child,
            addr,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Stops it with SIGTERM: its exit code and everything it said.
    pub fn stop(self) -> (Option<i32>, String) {
        self.signal("-TERM");
        self.wait()
    }

    /// Waits for it to exit: its exit code and everything it said.
    pub fn wait(mut self) -> (Option<i32>, String) {
        let code = self.child.wait().unwrap().code();
        // The reader thread ends with the pipe.
        std::thread::sleep(Duration::from_millis(50));
        let said = self.stderr.lock().unwrap().clone();
        (code, said)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client with its own kept-alive connections, which reads any status.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// POSTs `body` to `url`: the status and the answer.
pub fn post(agent: &ureq::Agent, url: &str, body: &[u8], token: Option<&str>) -> (u16, String) {
    let mut request = agent.post(url);
    if let Some(token) = token {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    let mut response = request.send(body).unwrap();
    read(&mut response)
}

pub fn get(agent: &ureq::Agent, url: &str) -> (u16, String) {
    read(&mut agent.get(url).call().unwrap())
}

pub fn read(response: &mut ureq::http::Response<ureq::Body>) -> (u16, String) {
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_string()
        .unwrap();
    (status, text)
}
