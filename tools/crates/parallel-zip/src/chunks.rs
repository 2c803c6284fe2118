//! Deflating one entry's chunks on worker threads: each chunk primed with
//! the 32 KiB before it and ended with a sync flush, so the pieces
//! concatenate into one deflate stream (as pigz does).

use anyhow::Result;
use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use std::io::Read;
use std::sync::{mpsc, Arc, Mutex};

/// Deflate window: each chunk is primed with this much preceding data.
pub(crate) const DICT: usize = 32 * 1024;

/// A compressed chunk, its CRC, and its input buffer (for reuse).
pub(crate) type ChunkResult = Result<(Vec<u8>, Crc, Vec<u8>)>;
/// Dictionary, data, is-last, and where to send the result.
pub(crate) type Job = (Vec<u8>, Vec<u8>, bool, mpsc::SyncSender<ChunkResult>);

/// Reads until `buf` is full or the source ends.
pub(crate) fn read_full(src: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Starts `jobs` threads in `scope` that compress the chunks sent on the
/// returned channel (until it is dropped), each answering on the job's own
/// reply channel.
pub(crate) fn spawn_compressors<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    jobs: usize,
    level: u32,
) -> mpsc::SyncSender<Job> {
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(jobs);
    let job_rx = Arc::new(Mutex::new(job_rx));
    for _ in 0..jobs {
        let job_rx = Arc::clone(&job_rx);
        scope.spawn(move || loop {
            let job = job_rx.lock().unwrap().recv();
            let Ok((dict, data, last, reply)) = job else {
                break;
            };
            let r = compress_chunk(level, &dict, &data, last);
            let mut crc = Crc::new();
            crc.update(&data);
            // The receiver may be gone after an error; nothing to do then.
            let _ = reply.send(r.map(|z| (z, crc, data)));
        });
    }
    job_tx
}

/// Raw-deflates one chunk: primed with `dict`, ended with a sync flush, or
/// with the final block if `last`.
///
/// Always with a fresh deflate state: a reset state keeps its old window
/// bytes, which deflate's match search reads past the valid data, so a
/// reused state made the output depend on which chunk a thread had
/// compressed before (that is, on scheduling and on --jobs).
fn compress_chunk(level: u32, dict: &[u8], data: &[u8], last: bool) -> Result<Vec<u8>> {
    let mut c = Compress::new(Compression::new(level), false);
    let c = &mut c;
    if !dict.is_empty() {
        c.set_dictionary(dict)
            .map_err(|e| anyhow::anyhow!("deflate dictionary: {e}"))?;
    }
    let mut out = Vec::with_capacity(data.len() + data.len() / 8 + 64);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    let start_in = c.total_in();
    loop {
        let consumed = (c.total_in() - start_in) as usize;
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity() / 2 + 64);
        }
        let status = c.compress_vec(&data[consumed..], &mut out, flush)?;
        let all_in = (c.total_in() - start_in) as usize == data.len();
        let room_left = out.capacity() > out.len();
        match status {
            Status::StreamEnd => break,
            _ if !last && all_in && room_left => break,
            _ => {}
        }
    }
    Ok(out)
}
