//===- mlsc.cpp - The mlsc driver -----------------------------------------===//
//
// Reads the command and its options (Options.cpp, from Options.def) and
// runs the command; each command is a file of its own in tools/mlsc/.
// Exit codes: tools/mlsc/Driver.h and docs/driver.md.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Mpi.h"

#include "mlsc/Commit.h"

#include "frontend/SourceFile.h"
#include "runtime/Parallel.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

namespace mlsc::driver {

std::unique_ptr<Compilation>
compileForEval(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf,
               const DiagnosticEngine::CommandLineLines *Appended) {
  auto C = std::make_unique<Compilation>();
  C->Options = O.Compile;
  if (Appended)
    C->Diags.commandLineLines(*Appended);
  bool OK = compile(*C, std::move(Buf));
  C->Diags.flush(llvm::errs());
  return OK ? std::move(C) : nullptr;
}

std::unique_ptr<llvm::MemoryBuffer> readInput(const DriverOptions &O,
                                              const std::string &Path) {
  SourceRead R = readSourceFile(Path, O.Compile.Limits.MaxFileBytes);
  if (!R.Buffer)
    reportError(R.Kind, Path, R.Why);
  return std::move(R.Buffer);
}

unsigned threads(const DriverOptions &O) {
  // Ranks on one machine share its cores.
  return O.Jobs ? O.Jobs : std::max(1u, defaultThreads() / mpi::localRanks());
}

} // namespace mlsc::driver

namespace {

using namespace mlsc;
using namespace mlsc::driver;

/// Runs the command \p O names.
int run(DriverOptions &O, const char *Argv0) {
  if (O.Help) {
    llvm::outs() << helpText(O.Target);
    return Success;
  }
  if (O.Version) {
    // The version, the commit built from and where the standard library
    // and registries are read from.
    llvm::outs() << "mlsc " << MLSC_VERSION << "\ncommit " << MLSC_COMMIT
                 << "\ndata " << defaultDataDir(Argv0) << "\n";
    return Success;
  }
  if (!O.List.empty())
    return listCommand(O.List);
  if (O.Compile.DataDir.empty())
    O.Compile.DataDir = defaultDataDir(Argv0);
  if (O.Cmd == Command::Walls)
    return wallsCommand(O);
  if (O.Cmd == Command::ExplainDiagnostic)
    return explainDiagnosticCommand(O);
  if (O.Cmd == Command::Audit)
    return auditCommand(O);
  if (O.Cmd == Command::Validate)
    return validateCommand(O);
  if (O.Cmd == Command::Fmt)
    return fmtCommand(O);
  if (O.Cmd == Command::Report)
    return reportCommand(O);
  if (O.Cmd == Command::Completion)
    return completionCommand(O);
  if (O.Cmd == Command::Lsp)
    return lspCommand(O);
  // mpirun hands standard input to rank 0 alone: every rank must read
  // the same file.
  if (O.Cmd == Command::Sweep && mpi::active() && O.Input == "-")
    return usage(DiagKind::InvalidOption,
                 "a sweep on MPI ranks reads a file, not standard input "
                 "(mpirun gives it to rank 0 alone)");
  std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(O, O.Input);
  if (!Buf)
    return InputErrors;
  switch (O.Cmd) {
  case Command::Compile:
    return O.Verify ? verifyCommand(O, std::move(Buf))
                    : compileCommand(O, std::move(Buf));
  case Command::Eval:
    return evalCommand(O, std::move(Buf));
  case Command::Check:
    return checkCommand(O, std::move(Buf));
  case Command::Explain:
    return explainCommand(O, std::move(Buf));
  case Command::Solve:
    return solveCommand(O, std::move(Buf));
  case Command::Sweep:
    return sweepCommand(O, std::move(Buf));
  case Command::Sensitivity:
    return sensitivityCommand(O, std::move(Buf));
  case Command::Walls:
  case Command::Audit:
  case Command::Validate:
  case Command::Fmt:
  case Command::Report:
  case Command::Completion:
  case Command::Lsp:
  case Command::Help:
  case Command::ExplainDiagnostic:
    break;
  }
  return Success;
}

/// The stack the command runs on. The front end's limits keep every
/// recursion to a few thousand frames (FrontendLimits); this leaves room
/// for them under the sanitizers, whose frames are several times larger.
constexpr unsigned CommandStackBytes = 256u << 20;

} // namespace

int main(int Argc, char **Argv) {
  llvm::InitLLVM X(Argc, Argv);
  mpi::init(Argc, Argv);
  DriverOptions O;
  int Code = parseArgs(Argc, Argv, O);
  // Under mpirun only sweeps are split; any other command runs on rank 0.
  if (Code < 0 && mpi::active() && mpi::rank() != 0 && O.Cmd != Command::Sweep)
    Code = Success;
  if (Code < 0) {
    llvm::thread Command(llvm::Optional<unsigned>(CommandStackBytes),
                         [&] { Code = run(O, Argv[0]); });
    Command.join();
  }
  // A full disk or a closed descriptor is one line and exit 1, not LLVM's
  // abort when a stream with an error is destroyed.
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::string Why = llvm::outs().error().message();
    llvm::outs().clear_error();
    reportError(DiagKind::OutputFailed, "",
                "cannot write the standard output: " + Why);
    Code = InputErrors;
  }
  if (llvm::errs().has_error()) {
    llvm::errs().clear_error();
    if (Code == Success)
      Code = InputErrors;
  }
  mpi::finalize();
  return Code;
}
