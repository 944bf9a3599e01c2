"""`contend report`, `html` and `plot jobs` on results of `contend jobs` (real runs).

Expected numbers are computed here from the raw per-repetition times in the
fixture files (``slowest_rank_s``) with numpy/scipy, not echoed from the code.
"""

import base64
import copy
import gzip
import io
import json
import math
import re
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from contend.cli import main
from contend.formatting import format_number
from scipy import stats

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
BOTH = FIXTURES / "jobs_both_vn1_n4.json.gz"
ISOLATED = FIXTURES / "jobs_isolated_vn1_n4.json.gz"
SIM = FIXTURES / "jobs_sim_proxies_n32.json.gz"
LOAD = FIXTURES / "load_vn1_n10.json.gz"


def raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def write_doc(path, doc):
    path.write_text(json.dumps(doc))
    return path


def expected(values, level=0.95):
    """Mean and Student-t interval of one sample, by hand (scipy's t quantile)."""
    x = np.asarray(values, dtype=float)
    n, mean = x.size, float(x.mean())
    half = stats.t.ppf(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def entries(doc):
    """(job, motif or None, results, ci) of every job and motif in file order."""
    for job in doc["jobs"]:
        yield job["name"], None, job["results"], job["ci"]
        for m in job["motifs"]:
            yield job["name"], m, m["results"], m["ci"]


def report_json(capsys, path, *extra):
    assert main(["report", str(path), "--format", "json", *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def assert_not_blank(png_bytes_or_path, min_colours=40):
    img = mpimg.imread(png_bytes_or_path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200
    rgb = np.round(img[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    colours = np.unique(rgb, axis=0)
    non_white = np.any(rgb < 250, axis=1).mean()
    assert len(colours) > min_colours, f"only {len(colours)} colours"
    assert non_white > 0.03, f"only {non_white:.1%} of pixels are not white"
    return rgb


def has_colour(rgb, target, tol=40):
    return bool((np.abs(rgb.astype(int) - np.asarray(target)).max(axis=1) < tol).any())


# tab:blue and tab:orange at alpha 0.7 over white
BLUE, ORANGE = (98, 159, 203), (255, 163, 80)


# ------------------------------------------------------------------ report


def test_fixture_is_a_real_both_run():
    doc = raw(BOTH)
    assert doc["schema"] == "contend-jobs" and doc["schema_version"] == "1.2"
    assert doc["mode"] == "both" and doc["passes"] == ["isolated", "concurrent"]
    assert not doc["dry_run"] and doc["environment"]["mpi_library"].startswith("Open MPI")
    assert [j["name"] for j in doc["jobs"]] == ["app", "io"]
    for j in doc["jobs"]:
        for p in ("isolated", "concurrent"):
            assert len(j["results"][p]["slowest_rank_s"]) == j["repeat"] == 3


def test_report_json_matches_raw_repetitions(capsys):
    doc = raw(BOTH)
    out, err = report_json(capsys, BOTH)
    assert "warning" not in err
    assert out["command"] == "jobs" and out["passes"] == ["isolated", "concurrent"]
    assert out["level"] == 0.95
    rows = out["jobs"] + out["motifs"]
    assert len(out["jobs"]) == 2 and len(out["motifs"]) == 4
    by_key = {(r["job"], r.get("motif")): r for r in rows}
    for job, motif, results, ci in entries(doc):
        row = by_key[(job, None if motif is None else motif["name"])]
        assert row["basis"] == "repeats"
        means = {}
        for phase in ("isolated", "concurrent"):
            values = results[phase]["slowest_rank_s"]
            mean, lo, hi = expected(values)
            means[phase] = mean
            assert row[f"{phase}_count"] == len(values)
            assert row[f"{phase}_mean_s"] == pytest.approx(mean, rel=1e-12)
            assert row[f"{phase}_lo_s"] == pytest.approx(lo, rel=1e-9)
            assert row[f"{phase}_hi_s"] == pytest.approx(hi, rel=1e-9)
            assert row[f"{phase}_median_s"] == pytest.approx(float(np.median(values)))
            assert row[f"{phase}_max_s"] == max(values)
            # the average over ranks and repeats is the file's own
            assert row[f"{phase}_avg_s"] == results[phase]["time_s"]["mean"]
        slowdown = means["concurrent"] / means["isolated"]
        assert row["slowdown_ratio"] == pytest.approx(slowdown, rel=1e-12)
        assert row["slowdown_ratio"] == pytest.approx(ci["slowest_rank"], rel=1e-9)
        assert row["ci_mean"] == ci["mean"]
        welch = stats.ttest_ind(
            results["concurrent"]["slowest_rank_s"],
            results["isolated"]["slowest_rank_s"],
            equal_var=False,
        )
        assert row["welch_p"] == pytest.approx(welch.pvalue, rel=1e-9)
    # every key is snake_case, times carry their unit
    for key in rows[0]:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", key), key
    assert {k for k in out["motifs"][0] if k.endswith("_s")} >= {
        "isolated_mean_s",
        "concurrent_hi_s",
    }


def test_report_level_changes_interval(capsys):
    doc = raw(BOTH)
    out, _ = report_json(capsys, BOTH, "--level", "0.9")
    values = doc["jobs"][0]["results"]["isolated"]["slowest_rank_s"]
    _, lo, hi = expected(values, 0.9)
    assert out["level"] == 0.9
    assert out["jobs"][0]["isolated_lo_s"] == pytest.approx(lo, rel=1e-9)
    assert out["jobs"][0]["isolated_hi_s"] == pytest.approx(hi, rel=1e-9)


def table_rows(text, title):
    """Rows (lists of cells split on 2+ spaces) of the text table under ``title``."""
    lines = text.splitlines()
    start = lines.index(title)
    header = re.split(r"\s{2,}", lines[start + 1].strip())
    rows = []
    for line in lines[start + 3 :]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return header, rows


def test_report_text_tables(capsys):
    doc = raw(BOTH)
    assert main(["report", str(BOTH)]) == 0
    text = capsys.readouterr().out
    assert "examples/jobs/quickstart.job" in text and "Open MPI" in text
    header, rows = table_rows(text, "Jobs: isolated vs. concurrent")
    # the largest mean is between 1 ms and 1 s: every time column says ms
    assert header == [
        "Job",
        "Ranks",
        "Repeats",
        "Isolated mean (ms)",
        "Isolated +-95% (ms)",
        "Concurrent mean (ms)",
        "Concurrent +-95% (ms)",
        "Slowdown (x)",
        "p",
        "CI avg (x)",
    ]
    assert [r[0] for r in rows] == ["app", "io"]
    for row, job in zip(rows, doc["jobs"]):
        iso = expected(job["results"]["isolated"]["slowest_rank_s"])
        con = expected(job["results"]["concurrent"]["slowest_rank_s"])
        assert row[1:3] == [str(job["ranks"]), str(job["repeat"])]
        assert row[3] == format_number(iso[0] * 1e3)
        assert row[4] == format_number((iso[2] - iso[0]) * 1e3)
        assert row[5] == format_number(con[0] * 1e3)
        assert row[7] == format_number(con[0] / iso[0])
        assert row[9] == format_number(job["ci"]["mean"])
    header, rows = table_rows(text, "Motifs: isolated vs. concurrent")
    assert header[:2] == ["Job", "Motif"]
    assert [r[1] for r in rows] == [
        "1 wl_allreduce (8 B)",
        "2 compute",
        "3 halo2d (8000 B)",
        "1 io_write (2097152 B)",
    ]
    assert "Student-t" in text and "slowest rank" in text


def test_report_markdown_and_csv(capsys):
    assert main(["report", str(BOTH), "-f", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "### Jobs: isolated vs. concurrent" in md
    assert "| Job | Ranks | Repeats | Isolated mean (ms) |" in md
    assert main(["report", str(BOTH), "-f", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("job,position,motif,")
    assert len(lines) == 1 + 2 + 4  # header, jobs, motifs
    assert lines[1].startswith("app,0,,")


def test_report_output_file(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["report", str(BOTH), "-f", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["jobs"][0]["job"] == "app"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_isolated_only_reports_sensibly(capsys):
    doc = raw(ISOLATED)
    assert doc["passes"] == ["isolated"]
    assert main(["report", str(ISOLATED)]) == 0
    text = capsys.readouterr().out
    header, rows = table_rows(text, "Jobs: isolated only")
    assert header == ["Job", "Ranks", "Repeats", "Isolated mean (ms)", "Isolated +-95% (ms)"]
    assert len(rows) == 2
    assert "Concurrent" not in text and "One pass only" in text
    out, _ = report_json(capsys, ISOLATED)
    job = out["jobs"][0]
    mean, lo, _ = expected(doc["jobs"][0]["results"]["isolated"]["slowest_rank_s"])
    assert job["isolated_lo_s"] == pytest.approx(lo, rel=1e-9)
    assert job["isolated_mean_s"] == pytest.approx(mean, rel=1e-12)
    assert job["concurrent_count"] == 0
    assert job["concurrent_mean_s"] is None and job["slowdown_ratio"] is None
    assert job["welch_p"] is None and job["ci_mean"] is None


def concurrent_only(tmp_path):
    doc = raw(BOTH)
    doc.update(mode="concurrent", passes=["concurrent"])
    doc["pass_clock"] = [c for c in doc["pass_clock"] if c["pass"] == "concurrent"]
    for _, _, results, _ in entries(doc):
        del results["isolated"]
    for job in doc["jobs"]:
        job["ci"] = None
        for m in job["motifs"]:
            m["ci"] = None
    return write_doc(tmp_path / "concurrent.json", doc), doc


def test_concurrent_only_reports_sensibly(tmp_path, capsys):
    path, doc = concurrent_only(tmp_path)
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    header, rows = table_rows(text, "Motifs: concurrent only")
    assert header == ["Job", "Motif", "Concurrent mean (ms)", "Concurrent +-95% (ms)"]
    mean = expected(doc["jobs"][1]["motifs"][0]["results"]["concurrent"]["slowest_rank_s"])[0]
    assert rows[3][2] == format_number(mean * 1e3)
    assert main(["plot", "jobs", str(path), "-o", str(tmp_path / "c.png")]) == 0
    assert_not_blank(tmp_path / "c.png")


def test_file_before_1_2_uses_the_summary(tmp_path, capsys):
    """No slowest_rank_s: mean and interval over ranks and repeats, from time_s."""
    doc = raw(BOTH)
    doc["schema_version"] = "1.1"
    for _, _, results, _ in entries(doc):
        for res in results.values():
            del res["slowest_rank_s"]
    path = write_doc(tmp_path / "old.json", doc)
    out, _ = report_json(capsys, path)
    row = out["jobs"][0]
    stat = doc["jobs"][0]["results"]["isolated"]["time_s"]
    half = stats.t.ppf(0.975, stat["count"] - 1) * stat["stddev"] / math.sqrt(stat["count"])
    assert row["basis"] == "ranks x repeats"
    assert row["isolated_count"] == stat["count"]
    assert row["isolated_mean_s"] == stat["mean"]
    assert row["isolated_hi_s"] == pytest.approx(stat["mean"] + half, rel=1e-9)
    con = doc["jobs"][0]["results"]["concurrent"]["time_s"]
    assert row["slowdown_ratio"] == pytest.approx(con["mean"] / stat["mean"], rel=1e-12)
    assert row["slowdown_ratio"] == pytest.approx(doc["jobs"][0]["ci"]["mean"], rel=1e-9)
    assert main(["report", str(path)]) == 0
    assert "holds no per-repetition times" in capsys.readouterr().out
    png = tmp_path / "old.png"
    assert main(["plot", "jobs", str(path), "-o", str(png)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no per-repetition times" in err and str(path) in err
    assert not png.exists()


def test_sim_fixture_slowdowns_are_the_files(capsys):
    doc = raw(SIM)
    out, err = report_json(capsys, SIM)
    assert "warning" not in err
    assert [r["job"] for r in out["jobs"]] == [j["name"] for j in doc["jobs"]]
    for row, job in zip(out["jobs"], doc["jobs"]):
        assert row["repeats"] == job["repeat"]
        assert row["slowdown_ratio"] == pytest.approx(job["ci"]["slowest_rank"], rel=1e-9)
    a2a = next(r for r in out["jobs"] if r["job"] == "a2a")
    assert a2a["isolated_count"] == 600 and a2a["welch_p"] < 1e-6  # a clear slowdown


def test_slowdown_mismatch_warns(tmp_path, capsys):
    doc = raw(BOTH)
    doc["jobs"][0]["ci"]["slowest_rank"] *= 2
    path = write_doc(tmp_path / "edited.json", doc)
    assert main(["report", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "app: slowdown recomputed" in err


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (lambda d: d.update(dry_run=True, passes=[]), "a dry run"),
        (lambda d: d.update(schema_version="2.0"), "'schema_version' is '2.0'"),
        (lambda d: d["jobs"][0].pop("results"), "invalid field jobs[0]"),
    ],
)
def test_bad_jobs_files_exit_2(tmp_path, capsys, edit, fragment):
    doc = raw(BOTH)
    edit(doc)
    path = write_doc(tmp_path / "bad.json", doc)
    for argv in (
        ["report", str(path)],
        ["plot", "jobs", str(path), "-o", str(tmp_path / "b.png")],
        ["html", str(path), "-o", str(tmp_path / "b.html")],
    ):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert fragment in captured.err and str(path) in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_jobs_file_given_to_compare_says_what_it_is(capsys):
    assert main(["compare", str(BOTH)]) == 2
    assert "a results file of `contend jobs`" in capsys.readouterr().err


def test_report_bootstrap_refused_for_jobs(capsys):
    assert main(["report", str(BOTH), "--bootstrap", "100"]) == 2
    assert "Student-t" in capsys.readouterr().err


# -------------------------------------------------------------------- plot


def test_plot_jobs_png_not_blank(tmp_path, capsys):
    png = tmp_path / "jobs.png"
    assert main(["plot", "jobs", str(BOTH), "-o", str(png)]) == 0
    assert f"wrote {png}" in capsys.readouterr().err
    rgb = assert_not_blank(png)
    assert has_colour(rgb, BLUE) and has_colour(rgb, ORANGE)  # both phases drawn
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.png"]


def test_plot_jobs_panels_and_formats(tmp_path):
    from contend.jobsresults import load_jobs
    from contend.reports import plots

    jobs = load_jobs(BOTH)
    fig = plots.job_boxes_figure(plots.job_times_frame(jobs))
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    doc = raw(BOTH)
    for title, job in zip(titles, doc["jobs"]):
        iso = np.mean(job["results"]["isolated"]["slowest_rank_s"])
        con = np.mean(job["results"]["concurrent"]["slowest_rank_s"])
        assert title == f"{job['name']}\nslowdown {format_number(con / iso)}x"
    plots.save_figure(fig, tmp_path / "f.png")
    motifs = plots.job_times_frame(jobs, motifs=True)
    assert list(dict.fromkeys(motifs["panel"])) == [
        "app: 1 wl_allreduce",
        "app: 2 compute",
        "app: 3 halo2d",
        "io: 1 io_write",
    ]
    assert len(motifs) == 4 * 2 * 3  # motifs x passes x repeats
    for ext, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        out = tmp_path / f"m.{ext}"
        assert main(["plot", "jobs", str(BOTH), "--motifs", "-o", str(out)]) == 0
        assert out.read_bytes().startswith(magic)


def test_plot_jobs_isolated_only_and_several_files(tmp_path):
    png = tmp_path / "iso.png"
    assert main(["plot", "jobs", str(ISOLATED), "-o", str(png)]) == 0
    rgb = assert_not_blank(png)
    assert has_colour(rgb, BLUE) and not has_colour(rgb, ORANGE, tol=25)
    png = tmp_path / "two.png"
    assert main(["plot", "jobs", str(BOTH), str(SIM), "-o", str(png)]) == 0
    assert_not_blank(png)


# -------------------------------------------------------------------- html


def embedded_pngs(html):
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def test_html_has_tables_and_embedded_box_plots(tmp_path, capsys):
    out = tmp_path / "jobs.html"
    assert main(["html", str(BOTH), "-o", str(out)]) == 0
    html = out.read_text()
    assert "<h3>Jobs</h3>" in html and "<h3>Motifs</h3>" in html
    assert "<th>Isolated mean (ms)</th>" in html and "<th>Slowdown (x)</th>" in html
    assert '<td class="s">1 io_write (2097152 B)</td>' in html
    doc = raw(BOTH)
    iso = np.mean(doc["jobs"][0]["results"]["isolated"]["slowest_rank_s"])
    assert f'<td class="n">{format_number(iso * 1e3)}</td>' in html
    pngs = embedded_pngs(html)
    assert len(pngs) == 2  # jobs and motifs
    for data in pngs:
        assert data.startswith(b"\x89PNG")
        assert_not_blank(io.BytesIO(data))
    assert "http://" not in html and "https://" not in html  # self-contained


def test_html_mixes_jobs_load_and_isolated(tmp_path):
    out = tmp_path / "mixed.html"
    assert main(["html", str(LOAD), str(BOTH), str(ISOLATED), "-o", str(out)]) == 0
    html = out.read_text()
    assert "Canaries: isolated vs. congested" in html  # the load run's section
    assert html.count("<h3>Jobs</h3>") == 2
    # the isolated-only file: no slowdown column in its tables
    section = html[html.index("<h2>jobs_isolated_vn1_n4</h2>") :]
    assert "Slowdown" not in section.split("<h3>Motifs</h3>")[0]
    assert len(embedded_pngs(html)) >= 5  # load histograms + 2 x (jobs, motifs)


def test_html_old_jobs_file_has_tables_without_figures(tmp_path):
    doc = copy.deepcopy(raw(BOTH))
    doc["schema_version"] = "1.1"
    for _, _, results, _ in entries(doc):
        for res in results.values():
            del res["slowest_rank_s"]
    path = write_doc(tmp_path / "old.json", doc)
    out = tmp_path / "old.html"
    assert main(["html", str(path), "-o", str(out)]) == 0
    html = out.read_text()
    assert "<h3>Jobs</h3>" in html and embedded_pngs(html) == []
    assert "holds no per-repetition times" in html
