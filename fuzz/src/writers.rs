//! Writers the fuzz checks hold readers against: the stream framings Spark's compression codecs
//! write (so that a fuzzed plain event log can be read back compressed and compared with the
//! plain reading), and DOT, DAX and STG text from a DAG (so that what a task-graph reader
//! accepted can be written in its own format and read again). The compression itself is the
//! codec crates' (lz4_flex, snap, ruzstd); only the framing around it is written here.
//!
//! Shared, like `checks.rs`, by the cargo-fuzz targets and the stable integration test.

use graphene::model::Dag;

/// Seed of the xxhash32 lz4-java's `LZ4BlockOutputStream` checksums each block with.
pub const LZ4_SEED: u32 = 0x9747_b28c;
/// The magic every block of lz4-java's block stream starts with.
pub const LZ4_MAGIC: &[u8] = b"LZ4Block";
/// snappy-java's `SnappyOutputStream` stream header magic (8 bytes, then two 32-bit versions).
pub const SNAPPY_MAGIC: &[u8] = b"\x82SNAPPY\x00";
/// A Zstandard frame's magic number, little-endian.
pub const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// The checksum lz4-java stores for a block: xxhash32 of the decompressed bytes with
/// [`LZ4_SEED`], masked to its low 28 bits (`StreamingXXHash32.asChecksum()`).
pub fn lz4_checksum(data: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(LZ4_SEED, data) & 0x0fff_ffff
}

fn lz4_header(out: &mut Vec<u8>, token: u8, compressed: usize, original: usize, check: u32) {
    out.extend_from_slice(LZ4_MAGIC);
    out.push(token);
    out.extend_from_slice(&(compressed as u32).to_le_bytes());
    out.extend_from_slice(&(original as u32).to_le_bytes());
    out.extend_from_slice(&check.to_le_bytes());
}

/// `data` as lz4-java's `LZ4BlockOutputStream` with block size `block` writes it (Spark's lz4
/// codec, `spark.io.compression.lz4.blockSize`): per block the magic, a token (method 0x10
/// stored or 0x20 lz4 in the high nibble, the block-size level in the low one), compressed and
/// original lengths and the checksum (little-endian 32-bit each), then the block, stored when
/// compressing does not make it smaller; an empty block ends the stream.
pub fn lz4_java(data: &[u8], block: usize) -> Vec<u8> {
    let block = block.max(64);
    let level = (32 - (block as u32 - 1).leading_zeros()).saturating_sub(10) as u8;
    let mut out = Vec::with_capacity(data.len() + data.len() / block * 21 + 42);
    for chunk in data.chunks(block) {
        let packed = lz4_flex::block::compress(chunk);
        let (method, body) = if packed.len() >= chunk.len() { (0x10, chunk) } else { (0x20, &packed[..]) };
        lz4_header(&mut out, method | level, body.len(), chunk.len(), lz4_checksum(chunk));
        out.extend_from_slice(body);
    }
    lz4_header(&mut out, 0x10 | level, 0, 0, 0);
    out
}

/// `data` as snappy-java's `SnappyOutputStream` writes it (Spark's snappy codec): the 16-byte
/// header (magic, version 1, compatible version 1, big-endian) and per chunk of `block` bytes
/// its compressed length (big-endian 32-bit) and a raw Snappy block. The stream carries no
/// checksum.
pub fn snappy_java(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = SNAPPY_MAGIC.to_vec();
    out.extend_from_slice(&1u32.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    let mut enc = snap::raw::Encoder::new();
    for chunk in data.chunks(block.max(1)) {
        let packed = enc.compress_vec(chunk).expect("snappy compresses any block");
        out.extend_from_slice(&(packed.len() as u32).to_be_bytes());
        out.extend_from_slice(&packed);
    }
    out
}

/// `data` as Zstandard frames with a content checksum (ruzstd's encoder writes one): one frame,
/// or one per `block` bytes (a stream may hold several frames, as zstd-jni writes after a
/// flush); `stored` keeps the bytes in raw blocks instead of compressing them.
pub fn zstd_frames(data: &[u8], block: usize, per_block: bool, stored: bool) -> Vec<u8> {
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};
    let level = if stored { CompressionLevel::Uncompressed } else { CompressionLevel::Fastest };
    if !per_block || data.is_empty() {
        return compress_to_vec(data, level);
    }
    data.chunks(block.max(1)).flat_map(|c| compress_to_vec(c, level)).collect()
}

fn dot_quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\\\""))
}

/// A label whose group (`task_type`: the text before a last `_<digits>`) is `group`.
fn labelled(group: &str) -> String {
    if group.is_empty() {
        String::new()
    } else {
        format!("{group}_0")
    }
}

/// The DAG as a DOT digraph with dslab-dag's attributes: `runtime` (seconds), `cores`,
/// `memory` (MB), a `label` grouping it as `group`, and edges with their `size` (bytes), every
/// value quoted (a DOT numeral has no exponent: `1e-6` is not one). None
/// when a name holds a backslash, which DOT's quoted strings cannot always carry back (a
/// trailing one escapes the closing quote).
pub fn dot(dag: &Dag) -> Option<String> {
    let names = dag.stages.iter().map(|s| s.name.as_str()).chain(dag.groups.iter().map(String::as_str));
    if names.chain([dag.name.as_str()]).any(|n| n.contains('\\')) {
        return None;
    }
    let mut out = format!("digraph {} {{\n", dot_quoted(&dag.name));
    for st in &dag.stages {
        for t in st.tasks() {
            let task = &dag.tasks[t as usize];
            out += &format!(
                "  {} [runtime=\"{:?}\", cores=\"{:?}\", memory=\"{:?}\", label={}]\n",
                dot_quoted(&st.name),
                task.duration,
                task.demand.0[0],
                task.demand.0[1] * 1000.0,
                dot_quoted(&labelled(&dag.groups[st.group as usize]))
            );
        }
    }
    for (s, st) in dag.stages.iter().enumerate() {
        for e in &st.parents {
            let data = dag.edge_data(e.stage, s as u32);
            let size = if data > 0.0 { format!(" [size=\"{:?}\"]", data * 1e6) } else { String::new() };
            out += &format!("  {} -> {}{size}\n", dot_quoted(&dag.stages[e.stage as usize].name), dot_quoted(&st.name));
        }
    }
    out += "}\n";
    Some(out)
}

fn xml_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&apos;",
            // Attribute-value normalization turns literal tabs and line breaks into spaces.
            c if (c as u32) < 0x20 => out += &format!("&#{};", c as u32),
            c => out.push(c),
        }
    }
    out
}

/// The DAG as a DAX 3 `<adag>`: one `<job>` per task with its `runtime`, `cores` and `memory`
/// (MB) pegasus profiles and a `name` grouping it as `group`, and explicit `<child>`/`<parent>`
/// dependencies (so no edge data and no disk demand: the files that carry them are not written).
pub fn dax(dag: &Dag) -> String {
    let mut out = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<adag name=\"{}\">\n", xml_attr(&dag.name));
    for st in &dag.stages {
        for t in st.tasks() {
            let task = &dag.tasks[t as usize];
            out += &format!(
                "  <job id=\"{}\" name=\"{}\" runtime=\"{:?}\">\n    <profile namespace=\"pegasus\" key=\"cores\">{:?}</profile>\n    <profile namespace=\"pegasus\" key=\"memory\">{:?}</profile>\n  </job>\n",
                xml_attr(&st.name),
                xml_attr(&labelled(&dag.groups[st.group as usize])),
                task.duration,
                task.demand.0[0],
                task.demand.0[1] * 1000.0
            );
        }
    }
    for st in &dag.stages {
        if st.parents.is_empty() {
            continue;
        }
        out += &format!("  <child ref=\"{}\">\n", xml_attr(&st.name));
        for e in &st.parents {
            out += &format!("    <parent ref=\"{}\"/>\n", xml_attr(&dag.stages[e.stage as usize].name));
        }
        out += "  </child>\n";
    }
    out += "</adag>\n";
    out
}

/// The DAG as an STG file, when it is one an STG file makes: one-task stages named `t<id>`
/// with ids 1..=m all present (0 may be), whole durations, every parent of lower id. Tasks
/// 0..=m keep their ids; task m+1 is a new exit dummy (no work, no edges).
pub fn stg(dag: &Dag) -> Option<String> {
    let id = |name: &str| name.strip_prefix('t').filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?.parse::<u64>().ok();
    let mut by_id = std::collections::BTreeMap::new();
    for (s, st) in dag.stages.iter().enumerate() {
        if st.len != 1 {
            return None;
        }
        by_id.insert(id(&st.name)?, s);
    }
    let m = *by_id.keys().next_back()?;
    if by_id.len() as u64 != m + u64::from(by_id.contains_key(&0)) {
        return None;
    }
    let mut out = format!("{m}\n");
    for k in 0..=m {
        let Some(&s) = by_id.get(&k) else {
            out += "0 0 0\n";
            continue;
        };
        let st = &dag.stages[s];
        let d = dag.tasks[st.first as usize].duration;
        if d.fract() != 0.0 {
            return None;
        }
        let parents: Vec<u64> =
            st.parents.iter().map(|e| id(&dag.stages[e.stage as usize].name)).collect::<Option<_>>()?;
        out += &format!("{k} {} {}", d as u64, parents.len());
        for p in parents {
            out += &format!(" {p}");
        }
        out += "\n";
    }
    out += &format!("{} 0 0\n", m + 1);
    Some(out)
}
