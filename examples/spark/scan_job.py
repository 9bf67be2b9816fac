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
e.g. shipped with `--files` and given as `./sse-replay`).

A local INPUT is read in place by the executors (a shared filesystem on a cluster). Any other
scheme, or `--stage`, is staged: each partition copies its files (Spark's `binaryFiles`) into a
local temporary folder, the lines given to the scan are `LOCALPATH<TAB>URI` so the rows name
the original object, and the folder is removed when the partition is done.
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile

from pyspark import StorageLevel, TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

# What `sse-replay scan` picks up when it walks a folder (see `sse-replay scan --help`).
EXTENSIONS = {"ron", "partial", "sse", "txt", "ndjson", "jsonl", "json", "har", "yaml", "yml"}
# The column each table is partitioned by.
PARTITION_BY = {"streams": "dialect", "calls": "parsed", "findings": "kind"}
TYPES = {"bool": BooleanType(), "int64": LongType(), "string": StringType()}


def spark_schemas(schema_json):
    """Per table, its Spark schema; and one schema with every column of the three (for parsing
    the mixed JSON lines once)."""
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
    """Every capture under `uri` (recursive, hidden entries skipped), through Hadoop's FileSystem,
    so any scheme Hadoop is configured for works."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    root = jvm.org.apache.hadoop.fs.Path(uri)
    fs = root.getFileSystem(conf)
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
    return sorted(found)


def stage_dir():
    """The local folder this partition's staged copies go to."""
    ctx = TaskContext.get()
    tag = f"{ctx.stageId()}-{ctx.partitionId()}-{ctx.attemptNumber()}" if ctx else "driver"
    return os.path.join(tempfile.gettempdir(), f"sse-replay-stage-{os.getpid()}-{tag}")


def stage(files):
    """Copy a partition's (uri, bytes) into a local folder; yield `LOCALPATH<TAB>URI` lines."""
    folder = stage_dir()
    os.makedirs(folder, exist_ok=True)
    for i, (uri, data) in enumerate(files):
        name = uri.rsplit("/", 1)[-1]
        local = os.path.join(folder, f"{i:06d}-{name}")
        with open(local, "wb") as f:
            f.write(data)
        yield f"{local}\t{uri}"


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
    a = ap.parse_args()

    spark = SparkSession.builder.appName("sse-replay scan").getOrCreate()
    sc = spark.sparkContext
    schema_text = subprocess.run([a.bin, "scan", "--schema"], check=True, capture_output=True, text=True).stdout
    schema_json = json.loads(schema_text)
    tables, union = spark_schemas(schema_json)

    files = list_files(spark, a.input)
    partitions = a.partitions or max(1, sc.defaultParallelism * 4)
    partitions = max(1, min(partitions, len(files)))
    print(f"sse-replay scan job: {len(files)} files in {partitions} partitions")

    local = a.input.startswith("file:") or "://" not in a.input
    command = [a.bin, "scan", "--files-from", "-", "--format", "jsonl", "-o", "-", "-j", str(a.jobs)]
    if local and not a.stage:
        paths = [f[len("file:"):] if f.startswith("file:") else f for f in files]
        lines = sc.parallelize(paths, partitions).pipe(" ".join(command))
    else:
        staged = sc.binaryFiles(",".join(files), minPartitions=partitions).mapPartitions(stage)
        lines = staged.pipe(" ".join(command)).mapPartitions(unstage)
    # `scan` exits 1 when some stream is not OK: that is data, not a failure of the task.
    rows = spark.read.schema(union).json(lines).persist(StorageLevel.MEMORY_AND_DISK)

    for name, schema in tables.items():
        df = rows.where(F.col("table") == name).select(*[f.name for f in schema.fields])
        df.write.mode("overwrite").partitionBy(PARTITION_BY[name]).parquet(f"{a.output}/{name}")
        print(f"  {name}: {df.count()} rows")
    write_text(spark, f"{a.output}/_schema.json", schema_text)
    rows.unpersist()
    spark.stop()


if __name__ == "__main__":
    main()
