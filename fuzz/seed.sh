#!/usr/bin/env bash
# Builds fuzz/corpus/<target>/ from ../testdata: one file per line for
# parse and normalize, base\nreference pairs for resolve, chunks of 50 lines
# for pipeline (some gzip, bzip2 and zstd compressed), rules files with
# sample lines for rules, request bodies of sample lines (after a byte
# saying check or add) for serve_body. Files are named by the SHA-1 of
# their contents, so running it again adds nothing twice. Needs python3.
set -euo pipefail
cd "$(dirname "$0")"
python3 - <<'PY'
import hashlib, json, os, random

T = "../testdata"
C = "../testdata/conformance"

def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return [l.rstrip(b"\r") for l in data.split(b"\n") if l.rstrip(b"\r")]

def tsv(path):
    rows = []
    header = None
    for l in read_lines(path):
        if l.startswith(b"#"):
            continue
        cols = l.split(b"\t")
        if header is None:
            header = cols
            continue
        rows.append(dict(zip(header, cols)))
    return rows

def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)

def b(s):
    return s.encode("utf-8") if isinstance(s, str) else s

sample = read_lines(f"{T}/sample/urls.txt")

singles = list(sample)
pairs = []

# RFC 3986 §5.4 and iri-string resolution vectors: base and reference.
for path in (f"{C}/rfc3986_section5.4_examples.tsv", f"{C}/iri-string/iri_string_resolve.tsv"):
    for row in tsv(path):
        base, ref = row.get(b"base"), row.get(b"reference")
        if base is None or ref is None:
            continue
        singles += [base, ref]
        pairs.append(base + b"\n" + ref)

# fluent-uri: normalization inputs, and IP hosts (as written and in a URI).
for row in tsv(f"{C}/fluent-uri/fluent_uri_normalize.tsv"):
    singles.append(row[b"input"])
for row in tsv(f"{C}/fluent-uri/fluent_uri_parse_ip.tsv"):
    ip = row[b"input"]
    singles.append(ip)
    singles.append(b"http://" + (b"[" + ip + b"]" if row[b"kind"] == b"ipv6" else ip) + b"/")

# iri-string component vectors: the composed reference.
with open(f"{C}/iri-string/iri_string_components_normalize.jsonl", encoding="utf-8") as f:
    for l in f:
        if l.strip():
            singles.append(b(json.loads(l)["composed"]))

# urlcanon.
singles += [b(s) for s in load_json(f"{C}/urlcanon/idempotence.json")]
singles += [b(k) for k in load_json(f"{C}/urlcanon/parsing.json")]
singles += [b"http://" + b(k) + b"/" for k in load_json(f"{C}/urlcanon/funky_ipv4.json")]
for group in load_json(f"{C}/urlcanon/path_dots.json").values():
    for k in group:
        singles.append(b"http://a" + b(k) if b(k).startswith(b"/") else b(k))
for name in ("surt.json", "ssurt.json"):
    for group in load_json(f"{C}/urlcanon/{name}").values():
        singles += [b(k) for k in group]

# WPT: URL inputs with their bases, IDNA inputs as hosts.
for name in ("urltestdata.json", "wpt_urltestdata_ip_host_subset.json"):
    for case in load_json(f"{C}/wpt-url/{name}"):
        if not isinstance(case, dict) or "input" not in case:
            continue
        singles.append(b(case["input"]))
        if case.get("base"):
            singles.append(b(case["base"]))
            pairs.append(b(case["base"]) + b"\n" + b(case["input"]))
for case in load_json(f"{C}/wpt-url/toascii.json"):
    if isinstance(case, dict) and "input" in case:
        singles.append(b"http://" + b(case["input"]) + b"/")

# Resolution pairs from the sample: some lines as bases for the §5.4 references.
rng = random.Random(3986)
refs = [row[b"reference"] for row in tsv(f"{C}/rfc3986_section5.4_examples.tsv")]
for base in rng.sample(sample, 200):
    for ref in rng.sample(refs, 5):
        pairs.append(base + b"\n" + ref)

def write(target, items, max_len):
    d = f"corpus/{target}"
    os.makedirs(d, exist_ok=True)
    n = 0
    for item in items:
        if not item or len(item) > max_len:
            continue
        name = hashlib.sha1(item).hexdigest()
        p = os.path.join(d, name)
        if not os.path.exists(p):
            with open(p, "wb") as f:
                f.write(item)
            n += 1
    print(f"corpus/{target}: {len(os.listdir(d))} files ({n} new)")

# Newlines inside a JSON string would make one seed two lines: drop them for
# the one-line targets.
singles = [s for s in singles if b"\n" not in s]
write("parse", singles, 4096)
write("normalize", singles, 4096)
write("resolve", pairs, 4096)

# Pipeline: chunks of 50 lines (LF), some with CRLF, a BOM, blank lines,
# repeats and no final newline, to reach every path of the line reader.
lines = sample + singles[len(sample):]
chunks = []
for i in range(0, len(lines), 50):
    part = lines[i:i + 50]
    chunks.append(b"\n".join(part) + b"\n")
for k in range(40):
    part = rng.sample(lines, 50)
    part += rng.sample(part, 10)  # duplicates
    rng.shuffle(part)
    sep = b"\r\n" if k % 2 else b"\n"
    body = sep.join(part) + (sep if k % 3 else b"") + b"\n" * (k % 4 == 0)
    chunks.append((b"\xef\xbb\xbf" if k % 5 == 0 else b"") + body)
# Compressed chunks, as the engine reads them by their magic numbers:
# gzip (one member, and two), bzip2; zstd ones are added below.
import bz2, gzip
for k, chunk in enumerate(chunks[:8]):
    packed = gzip.compress(chunk, mtime=0)
    chunks.append(packed + (gzip.compress(chunks[k + 8], mtime=0) if k % 2 else b""))
    chunks.append(bz2.compress(chunk))
write("pipeline", chunks, 16384)

# Rules: each rules file of testdata/rules (line format, ClearURLs format)
# with a NUL and 20 sample lines after it.
rules = []
for name in ("site.rules", "clearurls.json", "bench-500.rules"):
    with open(f"{T}/rules/{name}", "rb") as f:
        text = f.read()
    for i in range(0, 200, 20):
        rules.append(text + b"\0" + b"\n".join(sample[i:i + 20]))
write("rules", rules, 32768)

# serve_body: a byte saying check (0) or add (1), alternately, then a body
# of 1 to 50 consecutive sample lines: some CRLF, some without a final
# newline, some with a blank line or a leading BOM, some lines with their
# scheme and host upper-cased (in place, or repeated after) so keys repeat
# within a body and across bodies.
def shout(line):
    scheme, sep, rest = line.partition(b"://")
    if not sep:
        return line
    end = min([rest.find(c) for c in (b"/", b"?", b"#") if c in rest] or [len(rest)])
    user, at, host = rest[:end].rpartition(b"@")
    return scheme.upper() + sep + user + at + host.upper() + rest[end:]

bodies = []
for k in range(200):
    n = rng.randint(1, 50)
    start = rng.randrange(len(sample) - n)
    part = sample[start:start + n]
    if k % 3 == 0:
        part = [shout(l) if rng.random() < 0.3 else l for l in part]
    if k % 4 == 1:
        part += [shout(l) for l in rng.sample(part, min(len(part), 5))]
    if k % 7 == 2:
        part.insert(rng.randint(0, len(part)), b"")
    sep = b"\r\n" if k % 5 in (1, 3) else b"\n"
    body = sep.join(part) + (b"" if k % 6 == 5 else sep)
    if k % 11 == 4:
        body = b"\xef\xbb\xbf" + body
    bodies.append(bytes([k % 2]) + body)
# Bodies at the edges of the line reader: a BOM alone (no line at all), a
# BOM before a blank line, a CR alone, two blank lines.
for body in (b"\xef\xbb\xbf", b"\xef\xbb\xbf\r\n", b"\r", b"\n\n"):
    bodies += [b"\0" + body, b"\1" + body]
write("serve_body", bodies, 8192)
PY
if command -v zstd >/dev/null; then
    for seed in $(ls corpus/pipeline | head -n 8); do
        zstd -q -c "corpus/pipeline/$seed" >"corpus/pipeline/zstd-$seed"
    done
fi

# seen_store: real stores (the sample's keys, at two rungs, one and two
# commits), each packed as the target reads it: a 2-byte length, MANIFEST,
# then the run file.
BIN=$(cd .. && cargo build --release -q && echo "$PWD/target/release/urinorm")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p corpus/seen_store
head -n 40 ../testdata/sample/urls.txt >"$work/few.txt"
# Exit 1 only says some lines were rejected (the sample has a few that are
# not URIs); the store is complete. Anything else (2: usage or I/O) fails.
seen_add() {
    local rc=0
    "$BIN" seen add -q "$@" || rc=$?
    [ "$rc" -le 1 ] || { echo "seed.sh: urinorm seen add $* exited $rc" >&2; exit "$rc"; }
}
seen_add "$work/a" "$work/few.txt"
seen_add --rung syntax "$work/b" ../testdata/sample/urls.txt
seen_add "$work/c" "$work/few.txt" && seen_add "$work/c" ../testdata/sample/urls.txt
for store in "$work"/a "$work"/b "$work"/c; do
    python3 - "$store" <<'PY'
import glob, hashlib, os, struct, sys
store = sys.argv[1]
manifest = open(os.path.join(store, "MANIFEST"), "rb").read()
runs = sorted(glob.glob(os.path.join(store, "*.run")))
run = open(runs[0], "rb").read() if runs else b""
# The target names its run 0000000001.run: the manifest must too.
manifest_text = manifest.decode()
if runs:
    name = os.path.basename(runs[0])
    body, crc_line = manifest_text.rsplit("crc32 ", 1)
    body = body.replace(name, "0000000001.run")
    import zlib
    manifest = (body + "crc32 %08x\n" % (zlib.crc32(body.encode()) & 0xffffffff)).encode()
data = struct.pack("<H", len(manifest)) + manifest + run
path = os.path.join("corpus/seen_store", hashlib.sha1(data).hexdigest())
open(path, "wb").write(data)
PY
done


# history_file: the exports of those stores (one Parquet file each; the
# two-commit store's keys of two times).
mkdir -p corpus/history_file
for store in "$work"/a "$work"/b "$work"/c; do
    "$BIN" seen export "$store" -o "$store.history" >/dev/null
    part="$store.history/part-00000.parquet"
    cp "$part" "corpus/history_file/$(sha1sum "$part" | cut -c1-40)"
done
