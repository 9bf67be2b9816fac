"""The Spark job's accounting, without Spark: every listed file must come back as a row.

    python3 examples/spark/test_scan_job.py [SSE_REPLAY]

Runs the job's own map step (`scan_command`) with the real binary on two "partitions" of a
folder, the second one killed as an executor's out-of-memory killer would (SIGKILL, exit 137),
and checks that the manifest names the files lost and the job's exit code is 1; with both
partitions whole, it is 0. Needs a built binary (debug by default); no pyspark.
"""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scan_job  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "sse-replay"))


def pipe(command, lines, kill=False):
    """What `RDD.pipe` does with one partition: the lines on stdin, the output lines back; with
    `kill`, the process is killed (SIGKILL, as an out-of-memory killer does) while its input is
    still open, so it cannot have finished: whatever it wrote before is kept, as `pipe` keeps
    it."""
    p = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if kill:
        p.stdin.write("".join(line + "\n" for line in lines))
        p.stdin.flush()
        p.send_signal(signal.SIGKILL)
        out = p.stdout.read()
        p.wait()
        p.stdin.close()
        return out.splitlines(), p.returncode
    out, _ = p.communicate("".join(line + "\n" for line in lines))
    return out.splitlines(), p.returncode


class Accounting(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="scan job ")  # a space in every path
        self.root = os.path.join(self.dir, "captures")
        os.makedirs(os.path.join(self.root, "sub"))
        recordings = os.path.join(ROOT, "recordings")
        names = sorted(n for n in os.listdir(recordings) if n.endswith(".ron"))[:6]
        for i, n in enumerate(names):
            dst = os.path.join(self.root, "sub" if i % 2 else "", n)
            shutil.copy(os.path.join(recordings, n), dst)
        with open(os.path.join(self.root, "expected.json"), "w") as f:
            f.write('{"calls": []}')
        self.files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(self.root) for f in fs)
        self.names = {f: scan_job.name_under(self.root, f) for f in self.files}
        # The binary's path has a space too: the command is quoted for pipe's shlex split.
        self.bin = os.path.join(self.dir, "sse replay")
        shutil.copy(BIN, self.bin)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_job(self, kill_second):
        command = scan_job.scan_command(self.bin, 1, "test-1")
        lines = [f"{f}\t{self.names[f]}" for f in self.files]
        half = len(lines) // 2
        out = []
        for part, kill in ((lines[:half], False), (lines[half:], kill_second)):
            got, code = pipe(command, part, kill)
            self.assertEqual(code, -signal.SIGKILL if kill else 0)
            out += got
        rows = [json.loads(line) for line in out]
        by_file, table_rows = {}, {}
        for r in rows:
            table_rows[r["table"]] = table_rows.get(r["table"], 0) + 1
            if r["table"] == "streams":
                n, vs = by_file.get(r["source_file"], (0, []))
                by_file[r["source_file"]] = (n + 1, sorted(set(vs) | {r["verdict"]}))
                self.assertEqual(r["scan_id"], "test-1")
        m = scan_job.manifest(self.names.values(), by_file, table_rows, "test-1")
        return m, rows, [self.names[f] for f in self.files[half:]]

    def test_every_file_has_a_row_when_nothing_fails(self):
        m, rows, _ = self.run_job(kill_second=False)
        self.assertTrue(m["ok"], m)
        self.assertEqual(m["files_listed"], len(self.files))
        self.assertEqual(m["files_with_rows"], len(self.files))
        self.assertEqual(m["lost_files"], [])
        self.assertEqual(m["skipped_files"], ["captures/expected.json"])
        self.assertEqual(scan_job.report(m), 0)
        self.assertTrue(all(r["source_file"].startswith("captures/") for r in rows if r["table"] == "streams"))

    def test_a_killed_partition_fails_the_job_naming_its_files(self):
        m, rows, second = self.run_job(kill_second=True)
        self.assertFalse(m["ok"])
        seen = {r["source_file"] for r in rows if r["table"] == "streams"}
        lost = sorted(n for n in second if n not in seen)
        self.assertTrue(lost, "the killed partition lost files")
        self.assertEqual(m["lost_files"], lost)
        self.assertEqual(m["files_with_rows"], len(self.files) - len(lost))
        with tempfile.TemporaryFile("w+") as err:
            self.assertEqual(scan_job.report(m, out=err), 1)
            err.seek(0)
            text = err.read()
        for f in lost:
            self.assertIn(f, text)

    def test_names_are_the_paths_under_the_input(self):
        self.assertEqual(scan_job.name_under("s3a://b/captures/", "s3a://b/captures/x/a.sse"), "captures/x/a.sse")
        self.assertEqual(scan_job.name_under("file:/data/c", "file:/data/c/a.ron"), "c/a.ron")


if __name__ == "__main__":
    unittest.main()
