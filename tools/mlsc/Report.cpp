//===- Report.cpp - `mlsc report`: one HTML page per scenario file --------===//
//
// A report is one self-contained HTML file (docs/reports.md): the Vega
// library inlined, each plot's spec in a JSON block, a few lines of script
// that render them as SVG, and the text the commands print (scorecards,
// solves) beside them. It needs no network to open. What the page's
// script saw (plots drawn, their sizes, errors) is written into
// `#mlsc-status`, which the browser test reads.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Report.h"
#include "tools/mlsc/Driver.h"
#include "tools/mlsc/OutputFile.h"
#include "tools/mlsc/Queries.h"
#include "tools/mlsc/Render.h"
#include "tools/mlsc/RenderTables.h"

#include "runtime/Format.h"
#include "runtime/Sensitivity.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

/// Text for HTML.
std::string esc(llvm::StringRef S) {
  std::string Out;
  for (char Ch : S)
    switch (Ch) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    default:
      Out += Ch;
    }
  return Out;
}

/// JSON inside a <script> element: `</` would end it, so `<` is escaped.
std::string scriptJSON(llvm::StringRef S) {
  std::string Out;
  for (char Ch : S) {
    if (Ch == '<')
      Out += "\\u003c";
    else
      Out += Ch;
  }
  return Out;
}

/// An anchor name from any text.
std::string anchor(llvm::StringRef Prefix, llvm::StringRef Name) {
  std::string Out = Prefix.str() + "-";
  for (char Ch : Name)
    Out += llvm::isAlnum(Ch) ? Ch : '-';
  return Out;
}

const char *Style = R"css(
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1a1a1a; max-width: 1180px; margin: 0 auto; padding: 0 24px 48px; }
h1 { font-size: 24px; margin: 24px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; border-bottom: 2px solid #0072B2; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 20px 0 6px; }
p.meta { color: #555; margin: 0 0 12px; }
nav ul { columns: 2; padding-left: 20px; }
.verdicts span { display: inline-block; padding: 2px 8px; margin-right: 8px; border-radius: 4px;
                 border: 1px solid #888; font-weight: 600; }
.verdicts .PASS { background: #e6f2ff; } .verdicts .FAIL { background: #ffe6cc; border-style: dashed; }
.verdicts .WARN, .verdicts .UNKNOWN { background: #f2f2f2; border-style: dotted; }
figure { margin: 16px 0 24px; }
figcaption { color: #444; font-size: 13px; max-width: 900px; margin-top: 4px; }
.mlsc-plot { min-height: 40px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #ddd; vertical-align: top; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 12.5px; line-height: 1.35; }
details summary { cursor: pointer; color: #0072B2; }
#mlsc-status { display: none; }
)css";

/// Renders every plot of the page and writes what happened into
/// #mlsc-status (the browser test reads it).
const char *Script = R"js(
(function () {
  var status = {plots: 0, rendered: 0, failed: [], errors: [], sizes: []};
  window.addEventListener('error', function (e) { status.errors.push(String(e.message)); });
  function done() {
    document.querySelectorAll('.mlsc-plot').forEach(function (el) {
      var svg = el.querySelector('svg');
      var r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
      status.sizes.push({id: el.getAttribute('data-plot'), width: r.width, height: r.height});
    });
    var out = document.getElementById('mlsc-status');
    out.textContent = JSON.stringify(status);
    out.setAttribute('data-done', 'true');
  }
  var plots = JSON.parse(document.getElementById('mlsc-plots').textContent);
  status.plots = plots.length;
  if (typeof vega === 'undefined') {
    status.errors.push('the Vega library did not load');
    done();
    return;
  }
  Promise.all(plots.map(function (p, i) {
    var el = document.getElementById('mlsc-plot-' + i);
    try {
      var view = new vega.View(vega.parse(p), {renderer: 'svg', container: el, hover: true});
      return view.runAsync().then(function () { status.rendered++; }, function (e) {
        status.failed.push(el.getAttribute('data-plot') + ': ' + e);
      });
    } catch (e) {
      status.failed.push(el.getAttribute('data-plot') + ': ' + e);
      return Promise.resolve();
    }
  })).then(done, done);
})();
)js";

void placeFigures(std::string &Body, std::vector<std::string> &Specs,
                  const std::vector<Plot> &Plots) {
  for (const Plot &P : Plots) {
    size_t I = Specs.size();
    Specs.push_back(specText(P));
    Body += fmt::format("<figure><div class=\"mlsc-plot\" id=\"mlsc-plot-{}\" "
                        "data-plot=\"{}\" role=\"img\" aria-label=\"{}\">"
                        "</div>\n<figcaption><b>{}</b> <code>{}</code>. {}"
                        "</figcaption></figure>\n",
                        I, esc(P.Id), esc(P.Title), esc(P.Title), esc(P.Id),
                        esc(P.Caption));
  }
}

/// A scenario's result, its simulated requests' latencies (those served)
/// kept in \p Sim for the CDFs.
ScenarioResult resultWithSamples(Evaluator &E, llvm::SourceMgr &SM,
                                 LatencySamples &Sim) {
  return scenarioResult(E, SM, [&](const sim::RequestRecord &Rq) {
    if (Rq.Rejected || Rq.Shed)
      return;
    Sim.TTFT.push_back(Rq.TTFT);
    Sim.E2E.push_back(Rq.E2E);
    if (Rq.Output > 1)
      Sim.TPOT.push_back((Rq.E2E - Rq.TTFT) / (Rq.Output - 1));
  });
}

/// The macro figures a scenario has: name, value, what it is.
std::string macroTable(const ScenarioResult &R) {
  std::string Rows;
  for (MetricId M : R.Public) {
    const MetricInfo &I = metricInfo(M);
    if (I.Shown != Level::Macro || !R.has(M))
      continue;
    Rows += fmt::format(
        "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td>"
        "</tr>\n",
        esc(I.Name), esc(formatQuantity(R[M], I.Dim, I.IsBool)), esc(I.Doc));
  }
  if (Rows.empty())
    return "<p>No macro figure is computed for this scenario (power, cost "
           "and carbon need a node's power and a cluster's site; see the "
           "scorecard).</p>\n";
  return "<table><tr><th>macro figure</th><th>value</th><th>what it "
         "is</th></tr>\n" +
         Rows + "</table>\n";
}

/// The metric a scenario's sensitivity is shown for: its main phase's
/// step time.
std::optional<std::string> mainMetric(const graph::Graph &G) {
  PhaseId P = mainPhase(G);
  MetricId M = phaseInfo(P).StepTime;
  if (G.has(M))
    return std::string(metricInfo(M).Name);
  return std::nullopt;
}

bool writeReport(const DriverOptions &O, Compilation &C,
                 const std::string &Input, const std::string &Path,
                 const std::string &Vega) {
  std::string Body, Toc;
  std::vector<std::string> Specs;
  std::vector<ScenarioResult> Results;
  // Scenarios.
  for (const graph::Graph &G : C.Graphs) {
    Evaluator E(G);
    E.run();
    LatencySamples Sim;
    ScenarioResult R = resultWithSamples(E, C.SM, Sim);
    std::string Id = anchor("scenario", G.Scenario);
    Toc += fmt::format("<li><a href=\"#{}\">scenario {}</a></li>\n", Id,
                       esc(G.Scenario));
    Body += fmt::format("<section id=\"{}\"><h2>Scenario {}</h2>\n", Id,
                        esc(G.Scenario));
    std::string Binding =
        R.Binding && R.Binding->Known
            ? fmt::format("binding wall <b>{}</b> ({} step), {}x ahead of "
                          "{}",
                          esc(R.Binding->label()),
                          esc(phaseInfo(R.Binding->Phase).Prefix),
                          esc(formatNumber(R.Binding->Margin)),
                          esc(R.Binding->RunnerUp))
            : std::string("no binding wall: the scenario's step times are "
                          "not computed");
    std::string Card;
    llvm::raw_string_ostream CS(Card);
    printScorecard(R, CS);
    std::vector<Plot> Plots = scenarioPlots(R, R.Simulated ? &Sim : nullptr);
    if (!R.Feasible) {
      // As `mlsc eval`: what does not fit has no performance, macro
      // figures or sensitivity; its memory is what to look at.
      Body += "<p class=\"verdicts\"><span class=\"FAIL\">Feasibility "
              "FAIL</span><span class=\"UNKNOWN\">Performance not "
              "evaluated</span> the scenario does not fit: its performance, "
              "macro figures and sensitivity are not evaluated (see the "
              "scorecard).</p>\n";
      llvm::erase_if(
          Plots, [&](const Plot &P) { return P.Id != G.Scenario + ".memory"; });
      placeFigures(Body, Specs, Plots);
      Body += "<details><summary>The scorecard (<code>mlsc eval</code>)"
              "</summary><pre>" +
              esc(Card) + "</pre></details>\n</section>\n";
      Results.push_back(std::move(R));
      continue;
    }
    Body += fmt::format(
        "<p class=\"verdicts\"><span class=\"{0}\">Feasibility {0}</span>"
        "<span class=\"{1}\">Performance {1}</span> {2}</p>\n",
        "PASS", R.Performance, Binding);
    // What fails, next to the verdict, not only in the scorecard.
    std::string Failing;
    for (const ConditionResult &Cd : R.Conditions)
      if (Cd.V != Verdict::Pass)
        Failing += fmt::format("<li><code>{}</code> {}{}{} <small>{}</small>"
                               "</li>\n",
                               esc(Cd.Text), verdictWord(Cd.V),
                               Cd.Detail.empty() ? "" : ": ", esc(Cd.Detail),
                               esc(Cd.Location));
    // What saturates, in the scorecard's queue line's words.
    if (std::string Why = queueSaturation(R); !Why.empty()) {
      Failing = fmt::format("<li>the queue is UNSTABLE: {}, so waits grow "
                            "without bound (wall 7)</li>\n",
                            esc(Why)) +
                Failing;
    }
    if (!Failing.empty())
      Body += "<ul class=\"failing\">\n" + Failing + "</ul>\n";
    placeFigures(Body, Specs, Plots);
    Body += "<h3>Macro figures</h3>\n" + macroTable(R);
    if (std::optional<std::string> M = mainMetric(G)) {
      graph::NodeId Node = *G.findNamed(*M);
      std::vector<Elasticity> Es = elasticities(E, Node);
      std::vector<FactorFlips> Flips = bindingFlips(E);
      Body += fmt::format("<h3>Sensitivity of {}</h3>\n", esc(*M));
      placeFigures(Body, Specs, sensitivityPlots(G.Scenario, *M, Es, Flips, G));
    }
    Body += "<details><summary>The scorecard (<code>mlsc eval</code>)"
            "</summary><pre>" +
            esc(Card) + "</pre></details>\n</section>\n";
    Results.push_back(std::move(R));
  }
  // Fleets: their members, sites and totals, as `mlsc eval` prints them.
  for (const query::Fleet &F : C.Fleets) {
    std::string Id = anchor("fleet", F.Name);
    Toc +=
        fmt::format("<li><a href=\"#{}\">fleet {}</a></li>\n", Id, esc(F.Name));
    std::string Text;
    llvm::raw_string_ostream TS(Text);
    FleetResult FR = fleetResult(F, Results);
    printFleet(FR, TS);
    Body +=
        fmt::format("<section id=\"{}\"><h2>Fleet {}</h2>\n", Id, esc(F.Name));
    if (std::optional<Plot> P = fleetPlot(FR))
      placeFigures(Body, Specs, {std::move(*P)});
    Body += "<pre>" + esc(Text) + "</pre></section>\n";
  }
  // Sweeps and solves.
  for (const query::Query &Q : C.Queries) {
    if (Q.K == query::Query::Kind::Anchor)
      continue;
    const graph::Graph &G = C.Graphs[Q.Graph];
    bool Sweep = Q.K == query::Query::Kind::Sweep;
    std::string Id = anchor(Sweep ? "sweep" : "solve", Q.Name);
    Toc += fmt::format("<li><a href=\"#{}\">{} {}</a></li>\n", Id,
                       Sweep ? "sweep" : "solve", esc(Q.Name));
    Body += fmt::format("<section id=\"{}\"><h2>{} {} <small>(scenario "
                        "{})</small></h2>\n",
                        Id, Sweep ? "Sweep" : "Solve", esc(Q.Name),
                        esc(G.Scenario));
    Evaluator E(G);
    E.run();
    if (Sweep || !Q.Objectives.empty()) {
      GridPlotData D = gridPlots(E, Q, threads(O));
      if (D.Plots.empty())
        Body += Sweep ? "<p>Nothing to plot: no point has a value.</p>\n"
                      : "<p>Nothing to plot: no point meets the conditions "
                        "(below, why).</p>\n";
      placeFigures(Body, Specs, D.Plots);
      if (!Sweep) {
        GridResult R = paretoFront(E, Q, threads(O));
        Body += "<details><summary>The front (<code>mlsc solve</code>)"
                "</summary><pre>" +
                esc(R.Kept ? gridText(Q, R) : missText(Q, R)) +
                "</pre></details>\n";
      }
    } else {
      SolveResult R = solveOne(E, Q);
      std::string Text;
      llvm::raw_string_ostream TS(Text);
      printSolve(Q, R, TS);
      Body += "<pre>" + esc(Text) + "</pre>\n";
    }
    Body += "</section>\n";
  }
  if (Toc.empty())
    Body += "<p>The file has no scenario, sweep or solve.</p>\n";
  std::string Name = Input == "-" ? std::string("standard input")
                                  : llvm::sys::path::filename(Input).str();
  std::string Html;
  Html.reserve(Vega.size() + Body.size() + 65536);
  Html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n<meta name=\"viewport\" "
          "content=\"width=device-width, initial-scale=1\">\n";
  Html += fmt::format("<title>mlsc report: {}</title>\n<style>{}</style>\n",
                      esc(Name), Style);
  Html += "</head>\n<body>\n";
  Html += fmt::format("<h1>mlsc report: {}</h1>\n<p class=\"meta\">mlsc {} "
                      "&middot; every plot is drawn by Vega from the numbers "
                      "<code>mlsc eval</code>, <code>sweep</code>, "
                      "<code>solve</code> and <code>sensitivity</code> "
                      "print; hover a mark for its value.</p>\n",
                      esc(Name), MLSC_VERSION);
  if (!Toc.empty())
    Html += "<nav><ul>\n" + Toc + "</ul></nav>\n";
  Html += Body;
  Html += "<pre id=\"mlsc-status\"></pre>\n";
  Html += "<script type=\"application/json\" id=\"mlsc-plots\">[";
  for (size_t I = 0; I < Specs.size(); ++I)
    Html += (I ? ",\n" : "\n") + scriptJSON(Specs[I]);
  Html += "\n]</script>\n<script>\n" + Vega + "\n</script>\n<script>" + Script +
          "</script>\n</body>\n</html>\n";
  std::string Error;
  if (!writeFileAtomically(Path, Html, Error)) {
    reportError(DiagKind::OutputFailed, Path, Error);
    return false;
  }
  llvm::outs() << fmt::format("report {}: {} plot{} written to {}\n", Input,
                              Specs.size(), Specs.size() == 1 ? "" : "s", Path);
  return true;
}

} // namespace

std::vector<Plot> evalPlots(Compilation &C) {
  std::vector<Plot> Out;
  std::vector<ScenarioResult> Results;
  for (const graph::Graph &G : C.Graphs) {
    Evaluator E(G);
    E.run();
    LatencySamples Sim;
    ScenarioResult R = resultWithSamples(E, C.SM, Sim);
    for (Plot &P : scenarioPlots(R, R.Simulated ? &Sim : nullptr))
      Out.push_back(std::move(P));
    Results.push_back(std::move(R));
  }
  for (const query::Fleet &F : C.Fleets)
    if (std::optional<Plot> P = fleetPlot(fleetResult(F, Results)))
      Out.push_back(std::move(*P));
  return Out;
}

int reportCommand(const DriverOptions &O) {
  const std::vector<std::string> &Inputs = O.AuditPaths;
  // Where each report goes: --output for one input (a file) or several (an
  // existing folder), else FILE's stem + .html in the working directory.
  bool ToFolder = Inputs.size() > 1 ||
                  (!O.Output.empty() && llvm::sys::fs::is_directory(O.Output));
  if (Inputs.size() > 1 && !O.Output.empty() &&
      !llvm::sys::fs::is_directory(O.Output))
    return usage(DiagKind::InvalidOption,
                 fmt::format("--output names one file, and there are {} "
                             "inputs; give a folder that exists, or no "
                             "--output (each report goes to the working "
                             "directory)",
                             Inputs.size()));
  std::vector<std::string> Outputs;
  llvm::StringSet<> Seen;
  for (const std::string &In : Inputs) {
    if (In == "-" && (ToFolder || O.Output.empty()))
      return usage(DiagKind::MissingArgument,
                   "a report of standard input needs --output FILE");
    std::string Out;
    if (!O.Output.empty() && !ToFolder) {
      Out = O.Output;
    } else {
      llvm::SmallString<256> P(ToFolder && !O.Output.empty() ? O.Output : "");
      llvm::sys::path::append(P, llvm::sys::path::stem(In) + ".html");
      Out = std::string(P);
    }
    if (!Seen.insert(Out).second)
      return usage(DiagKind::InvalidOption,
                   fmt::format("two inputs would both write `{}`; report "
                               "them one at a time with --output",
                               Out));
    Outputs.push_back(Out);
  }
  std::string Vega;
  if (!readPlotAsset("vega.min.js", Vega))
    return InputErrors;
  bool OK = true;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(O, Inputs[I]);
    if (!Buf) {
      OK = false;
      continue;
    }
    std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
    if (!C) {
      OK = false;
      continue;
    }
    // The report may not replace an input or import of the run, nor a
    // folder, device or read-only file (OutputFile.h).
    if (!checkOutput(*C, OutputRequest{Outputs[I], false, {}, true})) {
      OK = false;
      continue;
    }
    OK &= writeReport(O, *C, Inputs[I], Outputs[I], Vega);
  }
  return OK ? Success : InputErrors;
}

} // namespace mlsc::driver
