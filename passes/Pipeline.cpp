//===- Pipeline.cpp - The compilation pipeline ----------------------------===//

#include "passes/Pipeline.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

namespace mlsc {

static const PassInfo PassTable[] = {
#define PASS(Flag, Function, Summary) {Flag, Function, Summary},
#include "passes/Passes.def"
};

llvm::ArrayRef<PassInfo> allPasses() { return PassTable; }

bool compile(Compilation &C, std::unique_ptr<llvm::MemoryBuffer> Main,
             llvm::StringRef StopAfter) {
  C.Program.MainBufferId =
      C.SM.AddNewSourceBuffer(std::move(Main), llvm::SMLoc());
  for (const PassInfo &P : allPasses()) {
    P.Run(C);
    if (C.DumpStream &&
        (C.Options.PrintIRAfter == P.Flag || C.Options.PrintIRAfter == "all")) {
      *C.DumpStream << "// -----// IR after " << P.Flag << " //----- //\n";
      ir::printProgram(C.Program, C.SM, *C.DumpStream, C.Options.PrintImported);
    }
    if (StopAfter == P.Flag)
      break;
  }
  return !C.Diags.hasErrors();
}

std::string defaultDataDir(const char *Argv0) {
  if (llvm::Optional<std::string> Env =
          llvm::sys::Process::GetEnv("MLSC_DATA_DIR"))
    return *Env;
  std::string Exe = llvm::sys::fs::getMainExecutable(
      Argv0, reinterpret_cast<void *>(&defaultDataDir));
  if (!Exe.empty()) {
    llvm::SmallString<256> Share(llvm::sys::path::parent_path(Exe));
    llvm::sys::path::append(Share, "..", "share", "mlsc");
    llvm::sys::path::remove_dots(Share, /*remove_dot_dot=*/true);
    if (llvm::sys::fs::is_directory(Share + "/stdlib"))
      return std::string(Share);
  }
  return MLSC_SOURCE_DIR;
}

} // namespace mlsc
