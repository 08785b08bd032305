//! Finding and decompressing the files of a Spark event log.
//!
//! Spark writes an application's log in one of two layouts (`spark.eventLog.rolling.enabled`):
//! a single file `<appId>[.<codec>][.inprogress]`, or a directory `eventlog_v2_<appId>` holding
//! `events_<N>_<appId>[.<codec>]` parts (read in order of `N`) and an
//! `appstatus_<appId>[.inprogress]` marker. Only the parts of the application the marker names
//! (without one: the application every part names) are read: a part of another application, a
//! number given twice or missing between two parts, and a part that is not a regular file (a
//! named pipe would block the read forever) are refused. While the marker ends in `.inprogress`
//! the last part is still being written, like a single `.inprogress` file.
//!
//! With `spark.eventLog.compress` each file is compressed by `spark.eventLog.compression.codec`,
//! named by its extension: `zstd` (the default since Spark 4), `lz4` or `snappy`. Each codec is
//! read in the stream framing Spark's `CompressionCodec` writes, which is not the codec's own file
//! format for two of them, and every checksum the framing carries is verified, as Spark's own
//! decoders do:
//!
//! * `zstd`: plain Zstandard frames (zstd-jni's output stream), one or more. A frame flagged with
//!   a content checksum (zstd-jni writes none by default; the `zstd` tool does) is verified.
//! * `lz4`: lz4-java's `LZ4BlockOutputStream`: blocks of `"LZ4Block"`, a token (method in the high
//!   nibble: 1 stored, 2 LZ4; block size in the low one), compressed and original lengths and a
//!   checksum (little-endian 32-bit each), then the block; an empty block ends a stream, and
//!   streams may follow each other. The checksum (xxhash32 of the original bytes, seed
//!   `0x9747b28c`, low 28 bits) of every block is verified.
//! * `snappy`: snappy-java's `SnappyOutputStream`: a 16-byte header (`\x82SNAPPY\0`, version,
//!   compatible version) and then chunks of a big-endian 32-bit length and a raw Snappy block.
//!   This framing has no checksum (unlike Snappy's own framing format, which Spark does not use);
//!   a corrupt chunk is found only when it does not decompress.
//!
//! A corrupt block is an error naming the file, the block and its byte offset. Every size is
//! checked against `--limit-input` before it is allocated, on the compressed and on the
//! decompressed side, so a small hostile file cannot expand without bound.

#[cfg(feature = "compressed-logs")]
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One file of the log, decompressed, with the name errors should carry.
pub struct LogPart {
    pub path: PathBuf,
    pub text: String,
    /// The file is still being written (`.inprogress`): its last line may be cut short.
    pub in_progress: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    Plain,
    Zstd,
    Lz4,
    Snappy,
}

/// True when `path` looks like a Spark event log by its name alone: a directory holding
/// `events_<N>_<appId>` parts, or a file with a Spark compression codec's extension.
pub fn looks_like_spark(path: &Path) -> bool {
    if path.is_dir() {
        return std::fs::read_dir(path)
            .is_ok_and(|entries| entries.flatten().any(|e| part_name(&e.file_name().to_string_lossy()).is_some()));
    }
    let name = file_name(path);
    let name = name.strip_suffix(".inprogress").unwrap_or(&name);
    [".zstd", ".zst", ".lz4", ".snappy", ".lzf"].iter().any(|ext| name.ends_with(ext))
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The parts of a log, decompressed, in the order Spark wrote them.
pub fn read_parts(path: &Path) -> Result<Vec<LogPart>> {
    if path.is_dir() {
        let rolling = rolling_parts(path)?;
        let mut total = 0u64;
        let mut out = Vec::with_capacity(rolling.parts.len());
        for p in &rolling.parts {
            let part = read_file(p)?;
            total += part.text.len() as u64;
            crate::limits::current()
                .check_input_bytes(total, "decompressed size of the rolling log")
                .map_err(|e| e.in_file(path))?;
            out.push(part);
        }
        // A running application's last part is the one Spark is still writing.
        if let Some(last) = out.last_mut() {
            last.in_progress |= rolling.in_progress;
        }
        Ok(out)
    } else {
        Ok(vec![read_file(path)?])
    }
}

/// `events_<N>_<appId>[.<codec>]` (a rolling log's part N): N and the application id (Spark
/// strips dots from application ids, so the first dot starts the extension).
fn part_name(name: &str) -> Option<(u64, &str)> {
    let (n, tail) = name.strip_prefix("events_")?.split_once('_')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let app = tail.split('.').next().unwrap_or("");
    let n = n.parse().ok()?;
    (!app.is_empty()).then_some((n, app))
}

/// The files of a rolling log, in order.
struct Rolling {
    parts: Vec<PathBuf>,
    /// The application was still running (`appstatus_<appId>.inprogress`).
    in_progress: bool,
}

/// The `events_<N>_<appId>[.codec]` parts of a rolling-log directory, by `N`. The application is
/// the one its `appstatus_<appId>[.inprogress]` file names (Spark writes one beside the parts),
/// else the one every part names; a part of another application is refused, as are two parts
/// with one number, a number missing between two parts and a part that is not a regular file.
fn rolling_parts(dir: &Path) -> Result<Rolling> {
    let in_dir = |e: Error| e.in_file(dir);
    let mut parts: Vec<(u64, String, PathBuf)> = Vec::new();
    let mut status: Option<(String, bool, String)> = None;
    for entry in std::fs::read_dir(dir).map_err(|e| in_dir(Error::Io(e)))? {
        let entry = entry.map_err(|e| in_dir(Error::Io(e)))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix("appstatus_") {
            let in_progress = rest.ends_with(".inprogress");
            let app = rest.strip_suffix(".inprogress").unwrap_or(rest).to_string();
            if let Some((other, _, other_name)) = &status {
                if *other != app {
                    return Err(in_dir(Error::Usage(format!(
                        "two applications' status files, {other_name} and {name}: a rolling log's \
                         directory holds one application's log"
                    ))));
                }
            }
            status = Some((app, in_progress, name));
        } else if let Some((n, app)) = part_name(&name) {
            parts.push((n, app.to_string(), entry.path()));
        }
    }
    if parts.is_empty() {
        return Err(in_dir(Error::Usage(
            "a directory, but not a rolling Spark event log (no events_<N>_<appId> files in it)".into(),
        )));
    }
    parts.sort();
    let (app, by) = match &status {
        Some((app, _, name)) => (app.clone(), name.clone()),
        None => (parts[0].1.clone(), file_name(&parts[0].2)),
    };
    for (_, other, path) in &parts {
        if *other != app {
            return Err(Error::Usage(format!(
                "a part of application '{other}', but this directory's log is application '{app}' \
                 (by {by}); Spark writes only its own application's parts into it"
            ))
            .in_file(path));
        }
    }
    for w in parts.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.0 == b.0 {
            return Err(in_dir(Error::Usage(format!(
                "two parts numbered {}: {} and {}",
                a.0,
                file_name(&a.2),
                file_name(&b.2)
            ))));
        }
        if b.0 != a.0 + 1 {
            return Err(in_dir(Error::Usage(format!(
                "part {} is missing between {} and {}: the log is incomplete",
                a.0 + 1,
                file_name(&a.2),
                file_name(&b.2)
            ))));
        }
    }
    // The type is checked before anything is opened: opening a named pipe would wait for a
    // writer forever. (`metadata` follows a symbolic link to what it names, without opening it.)
    for (_, _, path) in &parts {
        let meta = std::fs::metadata(path).map_err(|e| Error::Io(e).in_file(path))?;
        if !meta.is_file() {
            return Err(Error::Usage(
                "not a regular file (a named pipe, socket, device or directory): a rolling log's parts are files"
                    .into(),
            )
            .in_file(path));
        }
    }
    let in_progress = status.is_some_and(|s| s.1);
    Ok(Rolling { parts: parts.into_iter().map(|(_, _, p)| p).collect(), in_progress })
}

fn read_file(path: &Path) -> Result<LogPart> {
    let fail = |e: Error| e.in_file(path);
    let name = file_name(path);
    let in_progress = name.ends_with(".inprogress");
    let base = name.strip_suffix(".inprogress").unwrap_or(&name);
    let codec = match base.rsplit_once('.').map(|(_, ext)| ext) {
        Some("zstd" | "zst") => Codec::Zstd,
        Some("lz4") => Codec::Lz4,
        Some("snappy") => Codec::Snappy,
        Some("lzf") => {
            return Err(fail(Error::Usage(
                "compressed with lzf, which graphene does not read; rewrite the log with \
                 spark.eventLog.compression.codec=zstd, lz4 or snappy"
                    .into(),
            )))
        }
        _ => Codec::Plain,
    };
    let text = if codec == Codec::Plain {
        crate::formats::read_text(path)?
    } else {
        let raw = crate::formats::read_bytes(path)?;
        let limit = crate::limits::current().input_bytes;
        utf8_text(decompress(codec, &raw, limit).map_err(fail)?).map_err(fail)?
    };
    Ok(LogPart { path: path.to_path_buf(), text, in_progress })
}

/// A compressed Spark log given as bytes without a file name (a request body), known by the
/// magic number its codec's framing starts with: a zstd frame (`28 b5 2f fd`), lz4-java's
/// `"LZ4Block"` or snappy-java's `"\x82SNAPPY\0"`. `None` when it starts with none of them (the
/// caller reads it as text); else the decompressed text, under the same checks and `limit` as a
/// file.
pub fn decompress_bytes(raw: &[u8], limit: u64) -> Result<Option<String>> {
    const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
    let codec = if raw.starts_with(ZSTD_MAGIC) {
        Codec::Zstd
    } else if raw.starts_with(b"LZ4Block") {
        Codec::Lz4
    } else if raw.starts_with(b"\x82SNAPPY\x00") {
        Codec::Snappy
    } else {
        return Ok(None);
    };
    utf8_text(decompress(codec, raw, limit)?).map(Some)
}

/// Decompressed bytes as text, without a leading byte-order mark.
fn utf8_text(bytes: Vec<u8>) -> Result<String> {
    crate::formats::decode_text(bytes).map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("decompressed, but {m}")),
        e => e,
    })
}

#[cfg(feature = "compressed-logs")]
fn too_big(limit: u64) -> Error {
    Error::too_large("decompressed size", format!("more than {limit} bytes"), limit, "raise it with --limit-input")
}

fn decompress(codec: Codec, raw: &[u8], limit: u64) -> Result<Vec<u8>> {
    match codec {
        Codec::Plain => Ok(raw.to_vec()),
        #[cfg(feature = "compressed-logs")]
        Codec::Zstd => zstd(raw, limit),
        #[cfg(feature = "compressed-logs")]
        Codec::Lz4 => lz4_blocks(raw, limit),
        #[cfg(feature = "compressed-logs")]
        Codec::Snappy => snappy_java(raw, limit),
        #[cfg(not(feature = "compressed-logs"))]
        _ => {
            let _ = limit;
            Err(Error::Usage(
                "a compressed Spark log (zstd, lz4 or snappy): this build reads them only with \
                 graphene-formats' `compressed-logs` feature (on by default)"
                    .into(),
            ))
        }
    }
}

#[cfg(feature = "compressed-logs")]
fn zstd(mut raw: &[u8], limit: u64) -> Result<Vec<u8>> {
    let size = raw.len();
    let mut out = Vec::new();
    let mut frame = 0;
    while !raw.is_empty() {
        frame += 1;
        let offset = size - raw.len();
        let bad = |what: String| Error::Usage(format!("zstd frame {frame} at byte {offset}: {what}"));
        let mut dec = ruzstd::decoding::StreamingDecoder::new(&mut raw).map_err(|e| bad(e.to_string()))?;
        let room = limit.saturating_sub(out.len() as u64).saturating_add(1);
        let start = out.len();
        (&mut dec)
            .take(room)
            .read_to_end(&mut out)
            .map_err(|e| bad(format!("{e} (the file is truncated or corrupt)")))?;
        if out.len() as u64 > limit {
            return Err(too_big(limit));
        }
        // A frame flagged with a content checksum ends in the low 32 bits of the xxhash64 of its
        // decompressed bytes: verified, as zstd itself does (Spark's zstd-jni writes none).
        let frame_decoder = dec.into_frame_decoder();
        if let Some(stored) = frame_decoder.get_checksum_from_data() {
            let sum = frame_decoder.get_calculated_checksum().unwrap_or(!stored);
            if sum != stored {
                return Err(bad(format!(
                    "content checksum mismatch (the frame's {} bytes hash to 0x{sum:08x}, it says \
                     0x{stored:08x}): the file is corrupt",
                    out.len() - start
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(feature = "compressed-logs")]
const LZ4_MAGIC: &[u8] = b"LZ4Block";
#[cfg(feature = "compressed-logs")]
const LZ4_HEADER: usize = LZ4_MAGIC.len() + 1 + 4 + 4 + 4;
#[cfg(feature = "compressed-logs")]
/// The xxhash32 seed of lz4-java's block streams (`LZ4BlockOutputStream`'s default, which Spark's
/// lz4 codec uses).
const LZ4_SEED: u32 = 0x9747_b28c;

#[cfg(feature = "compressed-logs")]
/// lz4-java's block checksum: the xxhash32 of the block's original bytes, of which its
/// `Checksum` adapter keeps the low 28 bits.
fn lz4_checksum(data: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(LZ4_SEED, data) & 0x0fff_ffff
}

#[cfg(feature = "compressed-logs")]
fn lz4_blocks(raw: &[u8], limit: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let mut block = 0;
    let le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    while at < raw.len() {
        block += 1;
        let offset = at;
        let bad = |what: String| Error::Usage(format!("lz4 block {block} at byte {offset}: {what}"));
        if raw.len() - at < LZ4_HEADER {
            return Err(bad("truncated block header".into()));
        }
        let head = &raw[at..at + LZ4_HEADER];
        if &head[..8] != LZ4_MAGIC {
            return Err(bad(
                "no \"LZ4Block\" magic: not lz4-java's block stream (what Spark's lz4 codec writes)".into()
            ));
        }
        let method = head[8] & 0xf0;
        // The low nibble is the block size's log2 less 10: no block of the stream is larger.
        let max_block = 1usize << (10 + (head[8] & 0x0f));
        let compressed = le(&head[9..13]);
        let original = le(&head[13..17]);
        let stored = le(&head[17..21]) as u32;
        at += LZ4_HEADER;
        if original == 0 || compressed == 0 {
            // The end mark of one stream (another may follow): lz4-java writes it with no data
            // and a zero checksum, and refuses any other empty block.
            if original != 0 || compressed != 0 || stored != 0 {
                return Err(bad(format!(
                    "corrupt header: {compressed} compressed bytes for {original}, checksum 0x{stored:08x}"
                )));
            }
            continue;
        }
        if original > max_block {
            return Err(bad(format!("corrupt header: {original} bytes in a block of at most {max_block}")));
        }
        if out.len() as u64 + original as u64 > limit {
            return Err(too_big(limit));
        }
        if raw.len() - at < compressed {
            return Err(bad(format!("{compressed} compressed bytes announced, {} left", raw.len() - at)));
        }
        let data = &raw[at..at + compressed];
        let start = out.len();
        match method {
            0x10 => {
                if compressed != original {
                    return Err(bad(format!("stored block of {compressed} bytes claims {original}")));
                }
                out.extend_from_slice(data);
            }
            0x20 => {
                out.resize(start + original, 0);
                let n = lz4_flex::block::decompress_into(data, &mut out[start..]).map_err(|e| bad(e.to_string()))?;
                if n != original {
                    return Err(bad(format!("decompressed to {n} bytes, the header says {original}")));
                }
            }
            m => return Err(bad(format!("unknown compression method 0x{m:02x}"))),
        }
        let sum = lz4_checksum(&out[start..]);
        if sum != stored {
            return Err(bad(format!(
                "checksum mismatch (the block's bytes hash to 0x{sum:07x}, its header says 0x{stored:07x}): \
                 the file is corrupt"
            )));
        }
        at += compressed;
    }
    Ok(out)
}

#[cfg(feature = "compressed-logs")]
const SNAPPY_MAGIC: &[u8] = b"\x82SNAPPY\x00";

#[cfg(feature = "compressed-logs")]
fn snappy_java(raw: &[u8], limit: u64) -> Result<Vec<u8>> {
    if raw.len() < 16 || &raw[..8] != SNAPPY_MAGIC {
        return Err(Error::Usage(
            "no snappy-java stream header (\\x82SNAPPY): not what Spark's snappy codec writes".into(),
        ));
    }
    let mut out = Vec::new();
    let mut dec = snap::raw::Decoder::new();
    let mut at = 16usize;
    let mut chunk = 0;
    while at < raw.len() {
        chunk += 1;
        let offset = at;
        let bad = |what: String| Error::Usage(format!("snappy chunk {chunk} at byte {offset}: {what}"));
        if raw.len() - at < 4 {
            return Err(bad("truncated chunk length".into()));
        }
        let n = u32::from_be_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]) as usize;
        at += 4;
        if raw.len() - at < n {
            return Err(bad(format!("{n} bytes announced, {} left", raw.len() - at)));
        }
        let data = &raw[at..at + n];
        let len = snap::raw::decompress_len(data).map_err(|e| bad(e.to_string()))?;
        if out.len() as u64 + len as u64 > limit {
            return Err(too_big(limit));
        }
        let start = out.len();
        out.resize(start + len, 0);
        dec.decompress(data, &mut out[start..]).map_err(|e| bad(e.to_string()))?;
        at += n;
    }
    Ok(out)
}

#[cfg(all(test, feature = "compressed-logs"))]
mod tests {
    use super::*;

    /// One block of lz4-java's stream, as `LZ4BlockOutputStream` writes it.
    fn lz4_block(raw: &mut Vec<u8>, token: u8, data: &[u8], original: &[u8]) {
        raw.extend_from_slice(LZ4_MAGIC);
        raw.push(token);
        raw.extend_from_slice(&(data.len() as u32).to_le_bytes());
        raw.extend_from_slice(&(original.len() as u32).to_le_bytes());
        let sum = if original.is_empty() { 0 } else { lz4_checksum(original) };
        raw.extend_from_slice(&sum.to_le_bytes());
        raw.extend_from_slice(data);
    }

    #[test]
    fn lz4_stored_and_compressed_blocks_and_end_marks() {
        let text = b"{\"Event\":\"SparkListenerLogStart\"}\n".repeat(20);
        let packed = lz4_flex::block::compress(&text);
        let mut raw = Vec::new();
        lz4_block(&mut raw, 0x25, &packed, &text);
        lz4_block(&mut raw, 0x10, b"ab", b"ab");
        lz4_block(&mut raw, 0x10, b"", b"");
        lz4_block(&mut raw, 0x10, b"c", b"c");
        let out = lz4_blocks(&raw, 1 << 20).unwrap();
        assert_eq!(out.len(), text.len() + 3);
        assert!(out.starts_with(&text) && out.ends_with(b"abc"));
        assert!(lz4_blocks(&raw, 100).unwrap_err().to_string().contains("limit"));
        assert!(lz4_blocks(&raw[..raw.len() - 1], 1 << 20).unwrap_err().to_string().contains("announced"));
        assert!(lz4_blocks(b"LZ4Blocx12345678901234567", 10).unwrap_err().to_string().contains("magic"));
    }

    #[test]
    fn lz4_checksums_are_those_spark_wrote() {
        // The fixture was written by Spark's own lz4 codec (lz4-java): every block's checksum
        // verifies, and the 28-bit mask is lz4-java's (the full xxhash32 differs).
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/spark/tpch-q3.lz4");
        let raw = std::fs::read(path).unwrap();
        let text = lz4_blocks(&raw, 1 << 30).unwrap();
        assert!(text.starts_with(b"{\"Event\":\"SparkListenerLogStart\""));
        let (first, original) = (&raw[..LZ4_HEADER], &text[..32 * 1024]);
        assert_eq!(first[8] & 0xf0, 0x20, "an LZ4 block of 32 KiB");
        let stored = u32::from_le_bytes(first[17..21].try_into().unwrap());
        assert_eq!(stored, lz4_checksum(original));
        assert_ne!(stored, twox_hash::XxHash32::oneshot(LZ4_SEED, original));
    }

    #[test]
    fn a_corrupt_lz4_block_is_an_error_naming_the_block_and_its_offset() {
        let text = b"{\"Event\":\"SparkListenerTaskEnd\",\"Finish Time\":1795559103120}\n".repeat(50);
        let packed = lz4_flex::block::compress(&text);
        let mut raw = Vec::new();
        lz4_block(&mut raw, 0x10, b"ab", b"ab");
        let second = raw.len();
        lz4_block(&mut raw, 0x25, &packed, &text);
        assert_eq!(lz4_blocks(&raw, 1 << 20).unwrap().len(), text.len() + 2);
        // One digit changed in a literal of the compressed block: it still decompresses, to
        // other text of the same length; only the checksum tells.
        let digit = second + LZ4_HEADER + packed.windows(4).position(|w| w == b"1795").unwrap();
        let mut bad = raw.clone();
        bad[digit] = b'2';
        let changed = lz4_flex::block::decompress(&bad[second + LZ4_HEADER..], text.len()).unwrap();
        assert!(changed.len() == text.len() && changed != text && changed.starts_with(b"{\"Event\""));
        let err = lz4_blocks(&bad, 1 << 20).unwrap_err().to_string();
        assert!(err.starts_with(&format!("lz4 block 2 at byte {second}: checksum mismatch")), "{err}");
        assert!(err.contains("the file is corrupt"), "{err}");
        // A stored block's byte, and the checksum itself.
        let mut bad = raw.clone();
        bad[LZ4_HEADER] = b'x';
        assert!(lz4_blocks(&bad, 1 << 20).unwrap_err().to_string().starts_with("lz4 block 1 at byte 0: checksum"));
        let mut bad = raw.clone();
        bad[second + 17] ^= 1;
        assert!(lz4_blocks(&bad, 1 << 20).unwrap_err().to_string().contains("checksum mismatch"));
        // An end mark with data or a checksum, and a block larger than its token allows.
        let mut bad = raw.clone();
        lz4_block(&mut bad, 0x10, b"", b"");
        let n = bad.len();
        bad[n - 1] = 1;
        assert!(lz4_blocks(&bad, 1 << 20).unwrap_err().to_string().contains("corrupt header"));
        let mut big = Vec::new();
        let long = vec![b'a'; 2000];
        lz4_block(&mut big, 0x10, &long, &long);
        assert!(lz4_blocks(&big, 1 << 20).unwrap_err().to_string().contains("at most 1024"));
    }

    /// `printf '{"Event":"SparkListenerLogStart","Spark Version":"4.0.0"}\n' | zstd --check`:
    /// one frame with a content checksum.
    const ZSTD_CHECKED: &[u8] = &[
        0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0xd1, 0x01, 0x00, 0x7b, 0x22, 0x45, 0x76, 0x65, 0x6e, 0x74, 0x22, 0x3a,
        0x22, 0x53, 0x70, 0x61, 0x72, 0x6b, 0x4c, 0x69, 0x73, 0x74, 0x65, 0x6e, 0x65, 0x72, 0x4c, 0x6f, 0x67, 0x53,
        0x74, 0x61, 0x72, 0x74, 0x22, 0x2c, 0x22, 0x53, 0x70, 0x61, 0x72, 0x6b, 0x20, 0x56, 0x65, 0x72, 0x73, 0x69,
        0x6f, 0x6e, 0x22, 0x3a, 0x22, 0x34, 0x2e, 0x30, 0x2e, 0x30, 0x22, 0x7d, 0x0a, 0xe4, 0xa1, 0x18, 0xa9,
    ];

    #[test]
    fn zstd_content_checksums_are_verified() {
        let text = b"{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"4.0.0\"}\n";
        assert_eq!(ZSTD_CHECKED[4] & 0x04, 0x04, "the frame is flagged with a checksum");
        let mut two = ZSTD_CHECKED.to_vec();
        two.extend_from_slice(ZSTD_CHECKED);
        assert_eq!(zstd(&two, 1 << 20).unwrap(), [&text[..], &text[..]].concat());
        // The second frame's checksum, changed.
        let n = two.len();
        two[n - 1] ^= 0x40;
        let err = zstd(&two, 1 << 20).unwrap_err().to_string();
        let second = ZSTD_CHECKED.len();
        assert!(err.starts_with(&format!("zstd frame 2 at byte {second}: content checksum mismatch")), "{err}");
        // A byte of the content (a raw block: the decoder copies it as is), changed.
        let mut one = ZSTD_CHECKED.to_vec();
        let digit = one.windows(5).position(|w| w == b"4.0.0").unwrap();
        one[digit] = b'3';
        let err = zstd(&one, 1 << 20).unwrap_err().to_string();
        assert!(err.starts_with("zstd frame 1 at byte 0: content checksum mismatch"), "{err}");
        assert!(err.contains("the file is corrupt"), "{err}");
    }

    #[test]
    fn snappy_java_chunks() {
        let mut raw = SNAPPY_MAGIC.to_vec();
        raw.extend_from_slice(&1u32.to_be_bytes());
        raw.extend_from_slice(&1u32.to_be_bytes());
        for part in [&b"hello "[..], &b"world"[..]] {
            let c = snap::raw::Encoder::new().compress_vec(part).unwrap();
            raw.extend_from_slice(&(c.len() as u32).to_be_bytes());
            raw.extend_from_slice(&c);
        }
        assert_eq!(snappy_java(&raw, 100).unwrap(), b"hello world");
        assert!(snappy_java(&raw, 5).unwrap_err().to_string().contains("limit"));
        assert!(snappy_java(&raw[..raw.len() - 2], 100).is_err());
        assert!(snappy_java(b"not snappy at all", 100).is_err());
    }
}
