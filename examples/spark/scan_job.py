"""Scan a corpus of captures on a Spark cluster, with `sse-replay scan` as the map step.

    spark-submit scan_job.py INPUT OUTPUT [--bin sse-replay] [--partitions N] [--stage]

INPUT is a folder of captures: a local path, or any URI Hadoop reads (s3a://bucket/captures,
gs://…, abfs://…, hdfs://…). The driver lists the files under it; `RDD.pipe` hands each
partition's paths to `sse-replay scan --files-from - --format jsonl -o -` on the executors,
which prints one JSON line per row, tagged with its table; the rows are parsed with the schema
`sse-replay scan --schema` gives and written as three tables of partitioned Parquet:

    OUTPUT/streams/dialect=…/part-*.parquet
    OUTPUT/calls/parsed=…/part-*.parquet
    OUTPUT/findings/kind=…/part-*.parquet
    OUTPUT/_schema.json

the same rows `sse-replay scan -o DIR` writes on one machine (`duckdb_queries.py OUTPUT` asks
them the same questions). The `sse-replay` binary must be on every executor (`--bin` names it,
e.g. shipped with `--files` and given as `./sse-replay`; a path with spaces is fine).

Every file listed must come back as at least one row of `streams` (a stream, an unreadable file
or a skipped entry): the job writes OUTPUT/_manifest.json (files listed, files with rows, rows
per table, unreadable and skipped files, the files lost) and exits 1 naming the lost files when
a partition's scan died (killed, out of memory) and took its files' rows with it. Each line
given to the scan is `PATH<TAB>NAME`, NAME being the file's path under INPUT with INPUT's own
name first (as `sse-replay scan INPUT` names it), so the rows can be matched to the listing.

A local INPUT is read in place by the executors (a shared filesystem on a cluster). Any other
scheme, or `--stage`, is staged: each partition copies its files (Spark's `binaryFiles`) into a
local temporary folder, the lines given to the scan are `LOCALPATH<TAB>URI` so the rows name
the original object, and the folder is removed when the partition is done.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# What `sse-replay scan` picks up when it walks a folder (see `sse-replay scan --help`).
EXTENSIONS = {"ron", "partial", "sse", "eventstream", "txt", "ndjson", "jsonl", "json", "har", "yaml", "yml"}
# The column each table is partitioned by.
PARTITION_BY = {"streams": "dialect", "calls": "parsed", "findings": "kind"}


def name_under(root_uri, uri):
    """A file's name in the tables: the input's own name, then the file's path under it, with `/`
    between the parts (what `sse-replay scan ROOT` calls it)."""
    root = root_uri.rstrip("/")
    label = root.rsplit("/", 1)[-1] or root
    rest = uri[len(root):].lstrip("/") if uri.startswith(root) else uri
    return f"{label}/{rest}" if rest else label


def scan_command(binary, jobs, scan_id):
    """The map step, one string as `RDD.pipe` wants it (split with shlex, so quoted here: a
    binary path with spaces works). Exit 1 means "some stream is not OK", which is data: with
    `--fail-on never` any non-zero exit is a failure of the scan itself."""
    return shlex.join([binary, "scan", "--files-from", "-", "--format", "jsonl", "-o", "-",
                       "-j", str(jobs), "--fail-on", "never", "--scan-id", scan_id])


def manifest(listed, rows_by_file, table_rows, scan_id):
    """What the run wrote against what it was given: `listed` the names of the files listed,
    `rows_by_file` {source_file: (streams rows, verdicts)} from the `streams` table,
    `table_rows` {table: rows written}. Every listed file must have a row; a listed file without
    one is lost (its partition's scan died), a row naming no listed file is unexpected."""
    listed = sorted(set(listed))
    seen = set(rows_by_file)
    lost = [f for f in listed if f not in seen]
    unexpected = sorted(seen - set(listed))
    verdicts = {}
    for _, vs in rows_by_file.values():
        for v in vs:
            verdicts[v] = verdicts.get(v, 0) + 1
    return {
        "scan_id": scan_id,
        "files_listed": len(listed),
        "files_with_rows": len(seen & set(listed)),
        "rows": dict(sorted(table_rows.items())),
        "streams_by_verdict": dict(sorted(verdicts.items())),
        "unreadable_files": sorted(f for f, (_, vs) in rows_by_file.items() if "unreadable" in vs),
        "skipped_files": sorted(f for f, (_, vs) in rows_by_file.items() if "skipped" in vs),
        "lost_files": lost,
        "unexpected_files": unexpected,
        "ok": not lost and not unexpected,
    }


def report(m, out=sys.stderr, shown=20):
    """The manifest's verdict on one line per problem; the exit code of the job."""
    if m["ok"]:
        return 0
    if m["lost_files"]:
        print(f"sse-replay scan job: {len(m['lost_files'])} of {m['files_listed']} files have no row "
              "(their partition's scan failed):", file=out)
        for f in m["lost_files"][:shown]:
            print(f"  {f}", file=out)
        if len(m["lost_files"]) > shown:
            print(f"  … and {len(m['lost_files']) - shown} more (see _manifest.json)", file=out)
    if m["unexpected_files"]:
        print(f"sse-replay scan job: {len(m['unexpected_files'])} rows name files that were not listed, "
              f"e.g. {m['unexpected_files'][0]}", file=out)
    return 1


def spark_schemas(schema_json):
    """Per table, its Spark schema; and one schema with every column of the three (for parsing
    the mixed JSON lines once)."""
    from pyspark.sql.types import ArrayType, BooleanType, LongType, StringType, StructField, StructType

    TYPES = {"bool": BooleanType(), "int64": LongType(), "string": StringType(),
             "string[]": ArrayType(StringType(), False)}
    tables, union = {}, {"table": StructField("table", StringType(), False)}
    for name, table in schema_json["tables"].items():
        fields = []
        for c in table["columns"]:
            f = StructField(c["name"], TYPES[c["type"]], c["nullable"])
            fields.append(f)
            seen = union.get(c["name"])
            if seen is not None and seen.dataType != f.dataType:
                raise SystemExit(f"column {c['name']} has two types: {seen.dataType} and {f.dataType}")
            union[c["name"]] = StructField(c["name"], f.dataType, True)
        tables[name] = StructType(fields)
    return tables, StructType(list(union.values()))


def list_files(spark, uri):
    """The qualified root and every capture under `uri` (recursive, hidden entries skipped),
    through Hadoop's FileSystem, so any scheme Hadoop is configured for works."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    root = jvm.org.apache.hadoop.fs.Path(uri)
    fs = root.getFileSystem(conf)
    root = fs.makeQualified(root)
    found = []
    it = fs.listFiles(root, True)
    while it.hasNext():
        p = it.next().getPath()
        rel = p.toUri().getPath()
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts):
            continue
        name = parts[-1]
        if "." in name and name.rsplit(".", 1)[1].lower() in EXTENSIONS:
            found.append(p.toString())
    return root.toString(), sorted(found)


def stage_dir():
    """The local folder this partition's staged copies go to."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    tag = f"{ctx.stageId()}-{ctx.partitionId()}-{ctx.attemptNumber()}" if ctx else "driver"
    return os.path.join(tempfile.gettempdir(), f"sse-replay-stage-{os.getpid()}-{tag}")


def stage(files, names):
    """Copy a partition's (uri, bytes) into a local folder; yield `LOCALPATH<TAB>NAME` lines
    (`names`: uri → its name in the tables)."""
    folder = stage_dir()
    os.makedirs(folder, exist_ok=True)
    for i, (uri, data) in enumerate(files):
        base = uri.rsplit("/", 1)[-1]
        local = os.path.join(folder, f"{i:06d}-{base}")
        with open(local, "wb") as f:
            f.write(data)
        yield f"{local}\t{names.get(uri, uri)}"


def unstage(lines):
    """Pass the scan's rows on, then remove the partition's staged copies."""
    try:
        yield from lines
    finally:
        shutil.rmtree(stage_dir(), ignore_errors=True)


def write_text(spark, uri, text):
    """Write a small text file at `uri` through Hadoop's FileSystem."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(uri)
    out = path.getFileSystem(conf).create(path, True)
    out.write(bytearray(text.encode("utf-8")))
    out.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--bin", default="sse-replay", help="the sse-replay binary on the executors")
    ap.add_argument("--partitions", type=int, default=0, help="scan tasks (default: 4 per core)")
    ap.add_argument("--stage", action="store_true", help="copy the files to the executors first")
    ap.add_argument("--jobs", type=int, default=1, help="scan -j inside each task")
    ap.add_argument("--output-files", type=int, default=0,
                    help="Parquet files per partition value of each table (default: 1)")
    a = ap.parse_args()

    from pyspark import StorageLevel
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.appName("sse-replay scan").getOrCreate()
    sc = spark.sparkContext
    schema_text = subprocess.run([a.bin, "scan", "--schema"], check=True, capture_output=True, text=True).stdout
    schema_json = json.loads(schema_text)
    tables, union = spark_schemas(schema_json)
    scan_id = f"spark-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{sc.applicationId}"

    root, files = list_files(spark, a.input)
    names = {f: name_under(root, f) for f in files}
    partitions = a.partitions or max(1, sc.defaultParallelism * 4)
    partitions = max(1, min(partitions, len(files)))
    print(f"sse-replay scan job {scan_id}: {len(files)} files in {partitions} partitions")

    local = a.input.startswith("file:") or "://" not in a.input
    command = scan_command(a.bin, a.jobs, scan_id)
    if local and not a.stage:
        lines_in = [f"{f[len('file:'):] if f.startswith('file:') else f}\t{names[f]}" for f in files]
        lines = sc.parallelize(lines_in, partitions).pipe(command)
    else:
        staged = sc.binaryFiles(",".join(files), minPartitions=partitions).mapPartitions(
            lambda part: stage(part, names))
        lines = staged.pipe(command).mapPartitions(unstage)
    rows = spark.read.schema(union).json(lines).persist(StorageLevel.MEMORY_AND_DISK)

    # The accounting, before anything is written: every listed file has a row, or the job fails.
    by_file = {}
    for r in rows.where(F.col("table") == "streams").groupBy("source_file").agg(
            F.count("*").alias("n"), F.collect_set("verdict").alias("verdicts")).collect():
        by_file[r["source_file"]] = (r["n"], list(r["verdicts"]))
    counts = {r["table"]: r["count"] for r in rows.groupBy("table").count().collect()}
    m = manifest(names.values(), by_file, {t: counts.get(t, 0) for t in tables}, scan_id)
    if m["ok"]:
        per_value = max(1, a.output_files)
        for name, schema in tables.items():
            col = PARTITION_BY[name]
            df = rows.where(F.col("table") == name).select(*[f.name for f in schema.fields])
            # One task per partition value (a few files each), not one small file per scan task
            # and value.
            df = df.repartition(per_value, col) if per_value > 1 else df.repartition(col)
            df.write.mode("overwrite").partitionBy(col).parquet(f"{a.output}/{name}")
            print(f"  {name}: {m['rows'][name]} rows")
        write_text(spark, f"{a.output}/_schema.json", schema_text)
    write_text(spark, f"{a.output}/_manifest.json", json.dumps(m, indent=2) + "\n")
    rows.unpersist()
    spark.stop()
    return report(m)


if __name__ == "__main__":
    sys.exit(main())
