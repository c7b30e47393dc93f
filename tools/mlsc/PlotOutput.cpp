//===- PlotOutput.cpp - Printing a plot as Vega or SVG --------------------===//
//
// The Vega library is bundled at build time from Debian's node-vega
// (tools/report/, CMakeLists.txt): vega.min.js for the HTML reports and
// vega-svg.cjs, which Node.js runs to turn a spec into SVG with Vega's own
// SVG renderer. They are looked up in $MLSC_PLOT_DIR, then next to the
// installed driver (share/mlsc/plot), then in the build tree.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Plots.h"
#include "tools/mlsc/Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

std::string plotAssetDir() {
  if (llvm::Optional<std::string> Env =
          llvm::sys::Process::GetEnv("MLSC_PLOT_DIR"))
    return *Env;
  std::string Exe = llvm::sys::fs::getMainExecutable(
      "mlsc", reinterpret_cast<void *>(&plotAssetDir));
  if (!Exe.empty()) {
    llvm::SmallString<256> Dir(llvm::sys::path::parent_path(Exe));
    llvm::sys::path::append(Dir, "..", "share", "mlsc", "plot");
    llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
    if (llvm::sys::fs::exists(Dir + "/vega.min.js"))
      return std::string(Dir);
  }
  return MLSC_PLOT_BUILD_DIR;
}

bool readPlotAsset(llvm::StringRef Name, std::string &Text) {
  std::string Path = plotAssetDir() + "/" + Name.str();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> B =
      llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!B) {
    reportError(DiagKind::PlotRendererFailed, Path,
                fmt::format("cannot read the Vega library: {}; it is built "
                            "from Debian's node-vega with esbuild "
                            "(`make build` installs both), or set "
                            "MLSC_PLOT_DIR to the folder that holds it",
                            B.getError().message()));
    return false;
  }
  Text = (*B)->getBuffer().str();
  return true;
}

namespace {

/// Runs Node.js on vega-svg.cjs with \p Spec on its input; the SVG, or
/// empty (reported).
std::string renderSvg(const std::string &Spec) {
  std::string Script = plotAssetDir() + "/vega-svg.cjs";
  if (!llvm::sys::fs::exists(Script)) {
    reportError(DiagKind::PlotRendererFailed, Script,
                "no SVG renderer: it is built with the Vega library "
                "(`make build`), or set MLSC_PLOT_DIR");
    return "";
  }
  llvm::ErrorOr<std::string> Node = llvm::sys::findProgramByName("node");
  if (!Node)
    Node = llvm::sys::findProgramByName("nodejs");
  if (!Node) {
    reportError(DiagKind::PlotRendererFailed, "",
                "--format=svg runs Node.js, which is not on PATH (Debian: "
                "`apt-get install nodejs`); --format=vega prints the spec "
                "without it");
    return "";
  }
  // The spec in, the SVG and Node's messages out: three temporary files,
  // removed whatever happens.
  llvm::SmallString<128> In, Out, Err;
  int Fd = -1;
  std::error_code EC =
      llvm::sys::fs::createTemporaryFile("mlsc-plot", "json", Fd, In);
  if (!EC) {
    llvm::raw_fd_ostream OS(Fd, /*shouldClose=*/true);
    OS << Spec;
  }
  if (!EC)
    EC = llvm::sys::fs::createTemporaryFile("mlsc-plot", "svg", Out);
  if (!EC)
    EC = llvm::sys::fs::createTemporaryFile("mlsc-plot", "err", Err);
  auto cleanUp = [&] {
    for (const llvm::SmallString<128> *P : {&In, &Out, &Err})
      if (!P->empty())
        llvm::sys::fs::remove(*P);
  };
  if (EC) {
    cleanUp();
    reportError(DiagKind::PlotRendererFailed, "",
                "cannot create a temporary file for the SVG renderer: " +
                    EC.message());
    return "";
  }
  llvm::Optional<llvm::StringRef> Redirects[] = {
      llvm::StringRef(In), llvm::StringRef(Out), llvm::StringRef(Err)};
  std::string Error;
  int Code =
      llvm::sys::ExecuteAndWait(*Node, {*Node, Script}, llvm::None, Redirects,
                                /*SecondsToWait=*/60, 0, &Error);
  std::string Svg, Why;
  if (auto B = llvm::MemoryBuffer::getFile(Out))
    Svg = (*B)->getBuffer().str();
  if (auto B = llvm::MemoryBuffer::getFile(Err))
    Why = llvm::StringRef((*B)->getBuffer()).trim().str();
  cleanUp();
  if (Code != 0 || Svg.empty()) {
    reportError(DiagKind::PlotRendererFailed, "",
                fmt::format("Vega's SVG renderer failed (exit {}): {}", Code,
                            !Why.empty() ? Why : Error));
    return "";
  }
  return Svg;
}

} // namespace

int printPlot(const Plot &P, bool Svg) {
  std::string Spec = specText(P);
  if (!Svg) {
    llvm::outs() << Spec << "\n";
    return Success;
  }
  std::string Out = renderSvg(Spec);
  if (Out.empty())
    return InputErrors;
  llvm::outs() << Out;
  return Success;
}

} // namespace mlsc::driver
