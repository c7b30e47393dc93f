"""Unit tests of mlsc-update-golden's matching: which output line a CHECK
line stands for, and what of it is rewritten.

usage: update_golden_matching.py TOOLS_DIR   (run by golden-matching.test)
"""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOOLS = sys.argv.pop(1)
sys.dont_write_bytecode = True      # nothing written into the source tree


def load(name):
    path = os.path.join(TOOLS, name)
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


golden = load("mlsc-update-golden")
select = load("mlsc-json-select")

# An excerpt of `mlsc eval` output, and the same after the batch grew.
BEFORE = """\
scenario chat

Feasibility  PASS
  memory per device   26.43 GB of 80 GB (33.03%)   [wall 2: memory capacity]

Performance  PASS
  prefill time        337.9 ms   compute-bound: intensity 14.57 kFLOP/B above the ridge 295.2 FLOP/B
  decode step time    8.164 ms   memory-bound: intensity 14.26 FLOP/B below the ridge; compute time is 20.54x smaller
  throughput          1.469 ktok/s   per replica; 1.469 ktok/s per device

Conditions
  sla    decode_step_time < 20 ms      PASS  (8.164 ms vs 20 ms)  f.mls:21:9
  sla    throughput > 1 ktok/s         PASS  (1.469 ktok/s vs 1 ktok/s)  f.mls:21:30
"""
AFTER = """\
scenario chat

Feasibility  PASS
  memory per device   33.27 GB of 80 GB (41.59%)   [wall 2: memory capacity]

Performance  FAIL
  prefill time        1.348 s   compute-bound: intensity 43.06 kFLOP/B above the ridge 295.2 FLOP/B
  decode step time    23.28 ms   compute-bound: intensity 300 FLOP/B above the ridge; memory time is 3.515x smaller
  throughput          3.974 ktok/s   per replica; 3.974 ktok/s per device

Conditions
  sla    decode_step_time < 20 ms      FAIL  (23.28 ms vs 20 ms)  f.mls:21:9
  sla    throughput > 1 ktok/s         PASS  (3.974 ktok/s vs 1 ktok/s)  f.mls:21:30
"""


def update(checks, output, prefixes=("CHECK",), **opts):
    """The CHECK lines after an update against `output`, and the problems
    (as `line: message`)."""
    lines = checks.split("\n")
    directives = golden.find_directives(lines, list(prefixes))
    updater = golden.Updater(output, golden.Options(**opts))
    updater.run(directives)
    for d in directives:
        if d.index in updater.updates:
            lines[d.index] = d.head + updater.updates[d.index]
    return "\n".join(lines), ["%d: %s" % (d.index + 1, m) for d, m in updater.problems]


class Matching(unittest.TestCase):
    def assertUpdate(self, checks, output, expected, prefixes=("CHECK",), **opts):
        new, problems = update(checks, output, prefixes, **opts)
        self.assertEqual(problems, [])
        self.assertEqual(new, expected)

    def test_a_passing_golden_is_left_alone(self):
        checks = "# CHECK: decode step time 8.164 ms\n# CHECK: f.mls:21:9"
        self.assertUpdate(checks, BEFORE, checks)

    def test_numbers_change_and_a_trimmed_line_stays_trimmed(self):
        self.assertUpdate("# CHECK:   memory per device   26.43 GB of 80 GB (33.03%)\n"
                          "# CHECK:   throughput          1.469 ktok/s",
                          AFTER,
                          "# CHECK:   memory per device   33.27 GB of 80 GB (41.59%)\n"
                          "# CHECK:   throughput          3.974 ktok/s")

    def test_a_unit_that_changes_is_a_value(self):
        self.assertUpdate("# CHECK: prefill time        337.9 ms", AFTER,
                          "# CHECK: prefill time        1.348 s")

    def test_a_verdict_is_a_value(self):
        self.assertUpdate("# CHECK: Performance  PASS", AFTER, "# CHECK: Performance  FAIL")

    def test_a_verdict_mid_line(self):
        self.assertUpdate("# CHECK: compute time is 20.54x smaller", AFTER.replace(
            "memory time is 3.515x", "compute time is 7.052x"), "# CHECK: compute time is 7.052x smaller")
        self.assertUpdate("# CHECK: PASS  (8.164 ms vs 20 ms)", AFTER, "# CHECK: FAIL  (23.28 ms vs 20 ms)")

    def test_a_line_may_start_mid_line(self):
        self.assertUpdate("# CHECK: ridge 295.2 FLOP/B", AFTER, "# CHECK: ridge 295.2 FLOP/B")
        self.assertUpdate("# CHECK: intensity 14.26 FLOP/B below", AFTER.replace(
            "intensity 300 FLOP/B above", "intensity 30 FLOP/B below"),
            "# CHECK: intensity 30 FLOP/B below")

    def test_words_after_the_label_follow_the_output(self):
        self.assertUpdate("# CHECK: decode step time    8.164 ms   memory-bound", AFTER,
                          "# CHECK: decode step time    23.28 ms   compute-bound")

    def test_a_regex_block_stays_while_it_matches(self):
        self.assertUpdate("# CHECK: decode step time {{[0-9.]+}} ms   memory-bound", AFTER,
                          "# CHECK: decode step time {{[0-9.]+}} ms   compute-bound")
        self.assertUpdate("# CHECK: prefill time {{[0-9.]+}} ms", AFTER,
                          "# CHECK: prefill time {{[0-9.]+}} s")
        self.assertUpdate("# CHECK: prefill time {{[0-9]+}} ms", AFTER,
                          "# CHECK: prefill time 1.348 s")

    def test_a_regex_block_spans_the_words_that_leave_most_words_kept(self):
        self.assertUpdate(
            "# CHECK:     made of   {{.*}} + 438.3 MB activations + 2 GB buffers",
            "    made of           16 GB weights + 1 GB gradients + 438.3 MB activations + 2 TB buffers\n",
            "# CHECK:     made of   {{.*}} + 438.3 MB activations + 2 TB buffers")
        self.assertUpdate(
            "# CHECK: decode step time 5.222 ms   memory-bound: {{.*}}; TP all-reduces add 2.577 ms",
            "decode step time 5.222 ms   compute-bound: intensity 9 FLOP/B; compute time is 2x "
            "smaller; TP all-reduces add 2.577 ms\n",
            "# CHECK: decode step time 5.222 ms   compute-bound: {{.*}}; TP all-reduces add 2.577 ms")

    def test_a_line_that_still_passes_elsewhere_follows_its_check_next_lines(self):
        # `"status": "PASS"` still matches the first scenario's status, but the
        # line after it is the second scenario's reason: the status that
        # changed is the second one.
        json = ('"scenario": "a",\n"status": "PASS",\n"reason": "x",\n'
                '"scenario": "b",\n"status": "FAIL",\n"reason": "y",\n')
        self.assertUpdate('# CHECK: "status": "PASS",\n# CHECK-NEXT: "reason": "y",', json,
                          '# CHECK: "status": "FAIL",\n# CHECK-NEXT: "reason": "y",')

    def test_check_next_keeps_the_order_of_lines_with_one_label(self):
        self.assertUpdate("# CHECK: Conditions\n"
                          "# CHECK-NEXT: sla decode_step_time < 20 ms PASS\n"
                          "# CHECK-NEXT: sla throughput > 1 ktok/s PASS (1.469 ktok/s",
                          AFTER,
                          "# CHECK: Conditions\n"
                          "# CHECK-NEXT: sla decode_step_time < 20 ms FAIL\n"
                          "# CHECK-NEXT: sla throughput > 1 ktok/s PASS (3.974 ktok/s")

    def test_check_empty_and_whole_goldens(self):
        checks = "\n".join(golden.golden_lines(BEFORE, "# ", "CHECK"))
        self.assertUpdate(checks, AFTER, "\n".join(golden.golden_lines(AFTER, "# ", "CHECK")))

    def test_a_label_that_is_gone_is_reported_and_left_alone(self):
        checks = "# CHECK: throughput 1.469 ktok/s\n# CHECK: queueing not modelled"
        new, problems = update(checks, AFTER)
        self.assertEqual(new, "# CHECK: throughput 3.974 ktok/s\n# CHECK: queueing not modelled")
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("2: `CHECK: queueing not modelled` matches no "
                                               "output line after output line 9"), problems)

    def test_an_inserted_line_breaks_a_check_next_chain(self):
        checks = "# CHECK: Feasibility  PASS\n# CHECK-EMPTY:\n# CHECK-NEXT: Performance  PASS"
        new, problems = update(checks, AFTER.replace("\n\nPerformance", "\n  cost  1 USD\n\nPerformance"))
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("2: "), problems)
        # The lines after the break still follow the output.
        self.assertEqual(new.split("\n")[2], "# CHECK-NEXT: Performance  FAIL")

    def test_a_label_bounds_the_search(self):
        two = "scenario a\n  throughput  2 ktok/s\nscenario b\n  throughput  1 ktok/s\n"
        self.assertUpdate("# CHECK-LABEL: scenario a\n# CHECK: throughput 1 ktok/s\n"
                          "# CHECK-LABEL: scenario b\n# CHECK: throughput 1 ktok/s",
                          two,
                          "# CHECK-LABEL: scenario a\n# CHECK: throughput 2 ktok/s\n"
                          "# CHECK-LABEL: scenario b\n# CHECK: throughput 1 ktok/s")

    def test_check_same(self):
        self.assertUpdate("# CHECK: throughput\n# CHECK-SAME: 1.469 ktok/s per replica", AFTER,
                          "# CHECK: throughput\n# CHECK-SAME: 3.974 ktok/s per replica")

    def test_check_not_is_kept_and_reported_when_it_now_matches(self):
        checks = "# CHECK: Feasibility\n# CHECK-NOT: FAIL\n# CHECK: Conditions"
        self.assertEqual(update(checks, BEFORE), (checks, []))
        new, problems = update(checks, AFTER)
        self.assertEqual(new, checks)
        self.assertEqual(len(problems), 1)
        self.assertIn("now matches output line 6 `Performance FAIL`", problems[0])

    def test_check_dag_in_any_order(self):
        self.assertUpdate("# CHECK-DAG: throughput 1.469 ktok/s\n# CHECK-DAG: prefill time 337.9 ms",
                          AFTER,
                          "# CHECK-DAG: throughput 3.974 ktok/s\n# CHECK-DAG: prefill time 1.348 s")

    def test_the_line_that_keeps_most_numbers_wins(self):
        # Two lines differ from the CHECK line in numbers only; the one where
        # just the stale value differs is the one it stands for.
        tokens = "10:15 NUMBER `2`\n13:9 NUMBER `0.55`\n13:14 FROM `from`\n"
        self.assertUpdate("# CHECK: [[@LINE-1]]:9 NUMBER `0.864`\n"
                          "# CHECK-NEXT: [[@LINE-2]]:14 FROM `from`", tokens,
                          "# CHECK: [[@LINE-1]]:9 NUMBER `0.55`\n"
                          "# CHECK-NEXT: [[@LINE-2]]:14 FROM `from`")

    def test_a_line_that_starts_with_its_value(self):
        self.assertUpdate("# CHECK:    +1.48  w.batch", "  +0.9999  m.params\n  +1.08  w.batch\n",
                          "# CHECK:    +1.08  w.batch")

    def test_bare_numbers_match_only_as_they_are(self):
        new, problems = update("# CHECK: 8.164", AFTER)
        self.assertEqual(new, "# CHECK: 8.164")
        self.assertEqual(len(problems), 1)

    def test_a_line_without_a_label(self):
        self.assertUpdate("CHECKS: 3 passed, 0 failed, 0 unknown",
                          "2 passed, 1 failed, 0 unknown\n",
                          "CHECKS: 2 passed, 1 failed, 0 unknown", prefixes=("CHECKS",))

    def test_output_braces_are_escaped(self):
        self.assertUpdate("# CHECK: note  old x", "note  new {{y}} [[x]]\n",
                          "# CHECK: note  new {{[{][{]}}y}}")
        self.assertEqual(golden.golden_lines("a {{y}} [[x]]\n", "", "CHECK"),
                         ["CHECK:      a {{[{][{]}}y}} {{[[][[]}}x]]"])

    def test_json_select_lines(self):
        before = ('/scenarios/0/performance/metrics/decode_step_time/display = "8.164 ms"\n'
                  '/scenarios/0/performance/binding_wall = {"wall": "memory", "margin": 5.18}\n')
        after = ('/scenarios/0/performance/metrics/decode_step_time/display = "1.2 s"\n'
                 '/scenarios/0/performance/binding_wall = {"wall": "compute", "margin": 1.5, '
                 '"crossover_batch": null}\n')
        checks = "\n".join(golden.golden_lines(before, "# ", "JSON"))
        self.assertUpdate(checks, after, "\n".join(golden.golden_lines(after, "# ", "JSON")),
                          prefixes=("JSON",))

    def test_a_users_regex_groups_are_not_numbers(self):
        self.assertUpdate("# CHECK: throughput 1.469 ktok/s {{(per)}} replica", AFTER,
                          "# CHECK: throughput 3.974 ktok/s {{(per)}} replica")

    def test_blanks_in_a_regex_block_are_canonical_too(self):
        # FileCheck canonicalizes the whole check file: `{{^  x$}}` matches "  x".
        self.assertUpdate("# CHECK: a\n# CHECK-NEXT: {{^  x$}}", "a\n  x\n",
                          "# CHECK: a\n# CHECK-NEXT: {{^  x$}}")

    def test_match_full_lines(self):
        self.assertUpdate("# CHECK: throughput 1.469 ktok/s   per replica; 1.469 ktok/s per device",
                          AFTER,
                          "# CHECK: throughput 3.974 ktok/s   per replica; 3.974 ktok/s per device",
                          full_lines=True)


class Labels(unittest.TestCase):
    def label(self, text):
        end, value = golden.split_label(text)
        return text[:end].strip(), text[value:]

    def test_labels(self):
        self.assertEqual(self.label("  decode step time    8.164 ms   memory-bound"),
                         ("decode step time", "8.164 ms   memory-bound"))
        self.assertEqual(self.label("Feasibility  PASS"), ("Feasibility", "PASS"))
        self.assertEqual(self.label("/scenarios/0/mode = \"inference\""),
                         ("/scenarios/0/mode", "\"inference\""))
        self.assertEqual(self.label("│  ├─ decode.flops = 261.5 GFLOP"),
                         ("│  ├─ decode.flops", "261.5 GFLOP"))
        self.assertEqual(self.label("not computed yet: ttft.p50, ttft.p90"),
                         ("not computed yet", "ttft.p50, ttft.p90"))
        self.assertEqual(self.label("tp 1 x pp 1"), ("tp", "1 x pp 1"))
        self.assertEqual(self.label("scenario chat8b_on_h100"), ("scenario chat8b_on_h100", ""))


class RunLines(unittest.TestCase):
    def runs(self, *lines):
        return golden.parse_runs(list(lines), "/t/f.mls")

    def test_pipelines(self):
        run, = self.runs("# RUN: mlsc eval --format=json %s | mlsc-json-select /a~1b "
                         "| FileCheck %s --check-prefix=JSON --match-full-lines")
        self.assertEqual(run.lead, "# ")
        self.assertEqual(run.prefixes, ["JSON"])
        self.assertTrue(run.full_lines)
        self.assertEqual([s[0] for s in run.stages],
                         [["mlsc", "eval", "--format=json", "/t/f.mls"], ["mlsc-json-select", "/a~1b"]])

    def test_not_env_and_stderr(self):
        run, = self.runs("RUN: not env MLSC_X=1 mlsc check %s 2>&1 | FileCheck %s")
        argv, env, expect_failure, merge = run.stages[0]
        self.assertEqual((argv, env, expect_failure, merge),
                         (["mlsc", "check", "/t/f.mls"], {"MLSC_X": "1"}, True, True))

    def test_lines_that_are_not_goldens(self):
        self.assertEqual(self.runs("RUN: rm -rf %t && mkdir %t",
                                   "RUN: mlsc eval %s > %t.out",
                                   "RUN: mlsc eval %s | FileCheck %S/other.txt"), [])

    def test_a_substitution_outside_lit(self):
        with self.assertRaises(golden.FileError) as e:
            self.runs("RUN: mlsc eval %t/x.mls | FileCheck %s")
        self.assertIn("`%t` is a lit substitution", str(e.exception))

    def test_a_configurations_own_substitution_is_not_percent_s(self):
        with self.assertRaises(golden.FileError) as e:
            self.runs("RUN: mlsc eval %src/x.mls | FileCheck %s")
        self.assertIn("`%src` is a lit substitution", str(e.exception))
        run, = self.runs("RUN: mlsc eval %S/x.mls %s.json 100%% | FileCheck %s")
        self.assertEqual(run.stages[0][0], ["mlsc", "eval", "/t/x.mls", "/t/f.mls.json", "100%"])

    def test_a_configurations_substitutions_given_with_subst(self):
        golden.SUBSTITUTIONS.update({"src": "/r", "validate-json": "py '/r/u/v j.py'"})
        try:
            run, = self.runs("RUN: mlsc eval %src/x.mls | %validate-json eval "
                             "| FileCheck %s")
        finally:
            golden.SUBSTITUTIONS.clear()
        # A whole word becomes its value's words; inside a word, its text.
        self.assertEqual([s[0] for s in run.stages],
                         [["mlsc", "eval", "/r/x.mls"], ["py", "/r/u/v j.py", "eval"]])

    def test_continued_lines(self):
        run, = self.runs("# RUN: mlsc eval \\", "# RUN:   %s | FileCheck %s")
        self.assertEqual(run.stages[0][0], ["mlsc", "eval", "/t/f.mls"])

    def test_regenerate_keeps_the_place_of_the_lines(self):
        lines = ["# RUN: mlsc eval %s | FileCheck %s", "", "# CHECK: old", "# a note", "x", ""]
        run, = golden.parse_runs(lines, "/t/f.mls")
        new, count = golden.regenerate(lines, run, "a\n\nb\n", "/t/f.mls")
        self.assertEqual(new, ["# RUN: mlsc eval %s | FileCheck %s", "",
                               "# CHECK:      a", "# CHECK-EMPTY:", "# CHECK-NEXT: b",
                               "# a note", "x", ""])
        self.assertEqual(count, 3)


FAKE_MLSC = """#!/bin/sh
# A stand-in for mlsc: prints the file named FAKE_OUTPUT, exits FAKE_EXIT.
cat "$FAKE_OUTPUT"
echo "fake mlsc says: $*" >&2
exit "${FAKE_EXIT:-0}"
"""


class Files(unittest.TestCase):
    """The tool run as a program, on files, with a stand-in mlsc next to it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        shutil.copy(os.path.join(TOOLS, "mlsc-update-golden"), self.bin)
        self.write(os.path.join(self.bin, "mlsc"), FAKE_MLSC, 0o755)
        self.output = os.path.join(self.dir, "output.txt")
        self.write(self.output, BEFORE)
        self.env = dict(os.environ, FAKE_OUTPUT=self.output, PATH="/usr/bin:/bin")

    def tearDown(self):
        shutil.rmtree(self.dir)

    @staticmethod
    def write(path, text, mode=None):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode is not None:
            os.chmod(path, mode)

    @staticmethod
    def read(path):
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()

    def tool(self, *args, **env):
        return subprocess.run([sys.executable, os.path.join(self.bin, "mlsc-update-golden")]
                              + list(args), capture_output=True, text=True,
                              env=dict(self.env, **env), cwd=self.dir)

    def test_update_in_place_keeps_mode_and_line_ends(self):
        test = os.path.join(self.dir, "t.mls")
        self.write(test, "# RUN: mlsc eval %s | FileCheck %s\r\n"
                   "# CHECK: throughput 1.469 ktok/s\r\n", 0o640)
        self.write(self.output, AFTER)
        r = self.tool("t.mls")
        self.assertEqual((r.returncode, r.stderr), (0, "t.mls: 1 CHECK line updated\n"))
        self.assertEqual(self.read(test), "# RUN: mlsc eval %s | FileCheck %s\r\n"
                         "# CHECK: throughput 3.974 ktok/s\r\n")
        self.assertEqual(os.stat(test).st_mode & 0o777, 0o640)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".")], [])

    def test_dry_run_prints_a_diff_and_writes_nothing(self):
        test = os.path.join(self.dir, "t.mls")
        before = "# RUN: mlsc eval %s | FileCheck %s\n# CHECK: throughput 1.469 ktok/s\n"
        self.write(test, before)
        self.write(self.output, AFTER)
        r = self.tool("--dry-run", "t.mls")
        self.assertEqual(r.returncode, 0)
        self.assertIn("-# CHECK: throughput 1.469 ktok/s\n+# CHECK: throughput 3.974 ktok/s\n",
                      r.stdout)
        self.assertEqual(self.read(test), before)

    def test_a_folder(self):
        os.makedirs(os.path.join(self.dir, "tests", "Output"))
        self.write(os.path.join(self.dir, "tests", "a.mls"),
                   "# RUN: mlsc eval %s | FileCheck %s\n")
        self.write(os.path.join(self.dir, "tests", "notes.mls"), "# no RUN line\n")
        self.write(os.path.join(self.dir, "tests", "Output", "b.mls"),
                   "# RUN: mlsc eval %s | FileCheck %s\n")
        r = self.tool("tests")
        self.assertEqual((r.returncode, r.stderr),
                         (0, "tests/a.mls: 13 golden lines written\n"))
        self.assertEqual(self.read(os.path.join(self.dir, "tests", "a.mls")),
                         "# RUN: mlsc eval %s | FileCheck %s\n\n"
                         + "\n".join(golden.golden_lines(BEFORE, "# ", "CHECK")) + "\n")

    def test_a_failing_command_is_reported_with_its_messages(self):
        self.write(os.path.join(self.dir, "t.mls"), "# RUN: mlsc eval %s | FileCheck %s\n")
        r = self.tool("t.mls", FAKE_EXIT="1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("error: t.mls:1: `", r.stderr)
        self.assertIn("` exited 1, expected 0 or 3:\nfake mlsc says: eval ", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_exit_3_is_a_result(self):
        self.write(os.path.join(self.dir, "t.mls"), "# RUN: mlsc check %s | FileCheck %s\n"
                   "# CHECK: Feasibility  PASS\n")
        r = self.tool("t.mls", FAKE_EXIT="3")
        self.assertEqual(r.returncode, 0)
        self.assertIn("t.mls:1: note: `mlsc check` exited 3", r.stderr)

    def test_no_mlsc_is_one_line(self):
        os.unlink(os.path.join(self.bin, "mlsc"))
        self.write(os.path.join(self.dir, "t.mls"), "# RUN: mlsc eval %s | FileCheck %s\n")
        r = self.tool("t.mls")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("mlsc-update-golden: error: cannot find `mlsc`", r.stderr)

    def test_subst_runs_a_configurations_run_lines(self):
        self.write(os.path.join(self.dir, "t.mls"),
                   "# RUN: mlsc eval %tree/t.mls | FileCheck %s\n")
        r = self.tool("t.mls")
        self.assertEqual(r.returncode, 1)
        self.assertIn("give your configuration's own with --subst tree=VALUE", r.stderr)
        r = self.tool("--subst", "tree=" + self.dir, "t.mls")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(self.read(os.path.join(self.dir, "t.mls")),
                         r"\n# CHECK: +scenario chat\n")

    def test_subst_that_is_not_name_value_is_a_usage_error(self):
        for bad in ("tree", "a b=1", "s=/x"):
            r = self.tool("--subst", bad, "t.mls")
            self.assertEqual(r.returncode, 2, bad)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn("mlsc-update-golden: error: --subst " + bad, r.stderr)

    def test_checks_of_a_run_line_it_cannot_run_are_named(self):
        self.write(os.path.join(self.dir, "t.test"),
                   "RUN: mlsc eval %S/x.mls | FileCheck %s --check-prefix=A\n"
                   "RUN: mlsc eval %S/x.mls > %t\n"
                   "RUN: FileCheck %s --check-prefix=B < %t\n"
                   "A: Feasibility  PASS\nB: Conditions\n")
        r = self.tool("t.test")
        self.assertEqual((r.returncode, r.stderr), (0, (
            "t.test:3: note: the B lines this RUN line checks are left as they are: "
            "mlsc-update-golden runs only `mlsc ... | FileCheck %s` pipelines\n"
            "t.test: up to date\n")))

    def test_a_file_without_a_golden_run_line(self):
        self.write(os.path.join(self.dir, "t.mls"), "# RUN: mlsc eval %s\n")
        r = self.tool("t.mls")
        self.assertEqual((r.returncode, r.stderr), (
            1, "mlsc-update-golden: error: t.mls: no `RUN: mlsc ... | FileCheck %s` line\n"))


class JsonPointers(unittest.TestCase):
    DOC = {"a/b": {"m~n": [10, {"x": None}]}, "": 1}

    def test_escapes_and_indices(self):
        self.assertEqual(select.resolve(self.DOC, "/a~1b/m~0n/1/x"), None)
        self.assertEqual(select.resolve(self.DOC, "/a~1b/m~0n/0"), 10)
        self.assertEqual(select.resolve(self.DOC, "/"), 1)
        self.assertEqual(select.resolve(self.DOC, ""), self.DOC)

    def test_errors_name_where_they_stop(self):
        for pointer, message in [("/a~1b/m~0n/2", "index 2 is past the end of the array at `/a~1b/m~0n`"),
                                 ("/a~1b/m~0n/01", "`01` is not an index"),
                                 ("/a~1b/q", "no member `q` in the object at `/a~1b`"),
                                 ("/a~1b/m~0n/0/z", "`/a~1b/m~0n/0` is 10, not an object"),
                                 ("/a~2", "`~` must be followed by 0 or 1"),
                                 ("a", "starts with `/`")]:
            with self.assertRaises(select.SelectError) as e:
                select.resolve(self.DOC, pointer)
            self.assertIn(message, str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=1)
