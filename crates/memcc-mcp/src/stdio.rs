//! Standard input for the MCP server, with a bound on one request line that the client hears
//! about. The transport underneath drops a line over [`MAX_LINE_BYTES`] without a word, so a
//! client that sent one would wait for its answer for ever. [`BoundedLines`] watches the bytes
//! go by (buffering nothing), finds the top-level `"id"` of a line that runs over, and after
//! that line puts a small [`TOO_LARGE_METHOD`] request with the same id, which the server
//! answers with a JSON-RPC error. A line without an id is a notification: it gets no answer,
//! as JSON-RPC says, only a warning in the log.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The most one request line may hold, its newline included (the transport's own bound, so both
/// count the same lines as too long).
pub const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The method of the request that stands in for a line that ran over.
pub(crate) const TOO_LARGE_METHOD: &str = "memcc/requestTooLarge";

/// The longest id (as JSON text) kept from a line that runs over; a longer one is not an id a
/// client makes, and the line is then treated as a notification.
const MAX_ID_TEXT: usize = 256;

/// Reads `inner` unchanged, except that after each line of over `limit` bytes it inserts one
/// line: the [`TOO_LARGE_METHOD`] request carrying that line's id.
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    line: LineWatch,
    /// A stand-in request still to deliver, then input read past the line it stands for.
    inject: Vec<u8>,
    carry: Vec<u8>,
    scratch: Box<[u8]>,
}

impl<R> BoundedLines<R> {
    pub fn new(inner: R, limit: usize) -> Self {
        BoundedLines {
            inner,
            limit,
            line: LineWatch::default(),
            inject: Vec::new(),
            carry: Vec::new(),
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Copy input bytes to `out` up to the end of a line that ran over (its stand-in is then
    /// queued); returns how many it consumed.
    fn pass(&mut self, input: &[u8], out: &mut ReadBuf<'_>) -> usize {
        let room = input.len().min(out.remaining());
        for (i, &b) in input[..room].iter().enumerate() {
            if let Some(ended) = self.line.feed(b, self.limit) {
                out.put_slice(&input[..=i]);
                if let Some(overlong) = ended {
                    self.inject = overlong.stand_in();
                }
                return i + 1;
            }
        }
        out.put_slice(&input[..room]);
        room
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.inject.is_empty() {
            let n = this.inject.len().min(out.remaining());
            out.put_slice(&this.inject[..n]);
            this.inject.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if !this.carry.is_empty() {
            let carry = std::mem::take(&mut this.carry);
            let used = this.pass(&carry, out);
            this.carry = carry[used..].to_vec();
            return Poll::Ready(Ok(()));
        }
        let mut scratch = std::mem::take(&mut this.scratch);
        let want = scratch.len().min(out.remaining().max(1));
        let mut read = ReadBuf::new(&mut scratch[..want]);
        let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
        let got = read.filled().len();
        let result = match polled {
            Poll::Ready(Ok(())) => {
                let used = this.pass(&scratch[..got], out);
                this.carry = scratch[used..got].to_vec();
                Poll::Ready(Ok(()))
            }
            other => other,
        };
        this.scratch = scratch;
        result
    }
}

/// A line that ran over, as far as it matters: its id, when it had one.
struct Overlong {
    id: Option<String>,
    bytes: usize,
}

impl Overlong {
    /// The line put in its place: a request the server answers with an error for the same id.
    fn stand_in(&self) -> Vec<u8> {
        let Some(id) = &self.id else {
            tracing::warn!(bytes = self.bytes, "dropped a notification line over {MAX_LINE_BYTES} bytes");
            return Vec::new();
        };
        let mut line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{TOO_LARGE_METHOD}","params":{{"bytes":{}}}}}"#,
            self.bytes
        )
        .into_bytes();
        line.push(b'\n');
        line
    }
}

/// Follows one line's JSON just enough to find its top-level `"id"` value: nesting depth,
/// strings and escapes, the last key at depth 1.
#[derive(Default)]
struct LineWatch {
    bytes: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The string being read at depth 1 (a key, when a colon follows), up to 3 bytes.
    text: Vec<u8>,
    /// Set between `"id":` and the end of its value.
    in_id: bool,
    id: Vec<u8>,
    found_id: Option<Vec<u8>>,
}

impl LineWatch {
    /// Take one byte. At a newline, the line has ended: `Some(None)` for a line within the
    /// limit, `Some(Some(_))` for one over it; otherwise `None`.
    fn feed(&mut self, b: u8, limit: usize) -> Option<Option<Overlong>> {
        self.bytes += 1;
        if b == b'\n' {
            let line = std::mem::take(self);
            return Some((line.bytes > limit).then(|| line.overlong()));
        }
        if self.in_id {
            self.read_id(b);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            } else if self.depth == 1 && self.text.len() < 3 {
                self.text.push(b);
            }
            return None;
        }
        match b {
            b'"' => {
                self.in_string = true;
                self.text.clear();
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 && !self.in_id && self.text == b"id" => {
                self.in_id = true;
                self.id.clear();
            }
            _ => {}
        }
        None
    }

    /// One byte of the `"id"` value: it ends at a comma or brace back at depth 1.
    fn read_id(&mut self, b: u8) {
        let ends = !self.in_string && self.depth == 1 && matches!(b, b',' | b'}');
        if ends {
            self.in_id = false;
            self.found_id = Some(std::mem::take(&mut self.id));
        } else if self.id.len() <= MAX_ID_TEXT {
            self.id.push(b);
        }
    }

    fn overlong(mut self) -> Overlong {
        if self.in_id {
            // The line ended inside the id's value (no closing brace): what was read is all of it.
            self.found_id = Some(std::mem::take(&mut self.id));
        }
        let id = self.found_id.and_then(|raw| {
            let value: serde_json::Value = serde_json::from_slice(raw.trim_ascii()).ok()?;
            (value.is_string() || value.is_number()).then(|| value.to_string())
        });
        Overlong { id, bytes: self.bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn read_all(input: &[u8], limit: usize) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let mut out = Vec::new();
            BoundedLines::new(input, limit).read_to_end(&mut out).await.unwrap();
            String::from_utf8(out).unwrap()
        })
    }

    #[test]
    fn lines_within_the_limit_pass_unchanged() {
        let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"a\":1}\n";
        assert_eq!(read_all(input.as_bytes(), 64), input);
    }

    #[test]
    fn a_line_over_the_limit_is_followed_by_a_stand_in_with_its_id_wherever_the_id_sits() {
        let pad = "x".repeat(200);
        for (line, id) in [
            (format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"t":"{pad}"}}}}"#), "7"),
            (format!(r#"{{"method":"tools/call","params":{{"id":3,"t":"{pad}"}},"id":"req-9"}}"#), "\"req-9\""),
            (format!(r#"{{"params":{{"t":"{pad} \"id\":5"}}, "id" : 12 }}"#), "12"),
        ] {
            let input = format!("{line}\n{{\"next\":true}}\n");
            let out = read_all(input.as_bytes(), 100);
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 3, "{out}");
            assert_eq!(lines[0], line, "the long line itself goes on for the transport to drop");
            let stand_in: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(stand_in["id"].to_string(), id);
            assert_eq!(stand_in["method"], TOO_LARGE_METHOD);
            assert_eq!(stand_in["params"]["bytes"], line.len() + 1);
            assert_eq!(lines[2], "{\"next\":true}");
        }
    }

    #[test]
    fn a_notification_over_the_limit_gets_no_stand_in() {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"t":"{}"}}}}"#, "y".repeat(300));
        let input = format!("{line}\n");
        assert_eq!(read_all(input.as_bytes(), 100), input);
    }
}
