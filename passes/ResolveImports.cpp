//===- ResolveImports.cpp - Load the main module and its imports ----------===//
//
// Consumes the main buffer; produces Program::Modules, every module parsed
// once, in dependency order (a module after everything it imports; the
// prelude first). `import a.b.c` names `a/b/c.mls`, searched in the importing
// file's folder, then each -I folder, then the data folder that holds stdlib/
// and registries/. Diagnoses ImportNotFound and ImportCycle at the import
// line; a module's diagnostics show the import chain ("Included from").
//
//===----------------------------------------------------------------------===//

#include "frontend/SourceFile.h"
#include "passes/Pipeline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <map>

namespace mlsc {

namespace {

class ImportResolver {
public:
  explicit ImportResolver(Compilation &C) : C(C) {}

  void run() {
    if (C.Options.LoadPrelude) {
      std::string Prelude = C.Options.DataDir + "/stdlib/prelude.mls";
      if (llvm::sys::fs::exists(Prelude))
        loadFile(Prelude, llvm::SMRange());
      else
        C.Diags.reportFile(DiagKind::ImportNotFound, Prelude,
                           "cannot find the prelude; set MLSC_DATA_DIR to the "
                           "folder that holds stdlib/ and registries/");
    }
    visit(C.Program.MainBufferId, nullptr);
  }

private:
  Compilation &C;
  enum class State { Loading, Done };
  std::map<std::string, State> States;      ///< by real path
  std::map<std::string, std::string> Names; ///< real path -> module name
  /// The modules being loaded, outermost first (real paths).
  std::vector<std::string> Chain;

  /// Reads a module within the size limit; a failure is reported at the
  /// import that named it (against the path for the prelude).
  void loadFile(const std::string &Path, llvm::SMRange Import,
                bool HideSource = false) {
    if (Chain.size() >= C.Options.Limits.MaxImportDepth) {
      C.Diags.report(DiagKind::DependencyTooDeep, Import,
                     fmt::format("imports nest more than {} deep; `{}` is "
                                 "not loaded",
                                 C.Options.Limits.MaxImportDepth, Path));
      return;
    }
    // With a cache, the buffer lives there and the SourceMgr gets a view
    // of it, so that a module parsed before can be used again as is.
    ModuleCache *Cache = C.Options.Modules;
    ModuleCache::Entry *Kept = nullptr;
    std::string Key;
    if (Cache) {
      Key = realPathOr(Path);
      auto It = Cache->Entries.find(Key);
      if (It != Cache->Entries.end())
        Kept = &It->second;
    }
    if (!Kept) {
      SourceRead R = readSourceFile(Path, C.Options.Limits.MaxFileBytes);
      if (!R.Buffer) {
        if (Import.isValid())
          C.Diags.report(R.Kind, Import,
                         fmt::format("cannot import `{}`: {}", Path, R.Why));
        else
          C.Diags.reportFile(R.Kind, Path, R.Why);
        return;
      }
      if (!Cache) {
        unsigned Id =
            C.SM.AddNewSourceBuffer(std::move(R.Buffer), Import.Start);
        if (HideSource)
          C.Diags.hideSource(Id);
        visit(Id, nullptr);
        return;
      }
      Kept = &Cache->Entries[Key];
      Kept->Buffer = std::move(R.Buffer);
    }
    // The view is named by this compilation's path to the file, which its
    // diagnostics and relative imports use.
    unsigned Id = C.SM.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(
            llvm::MemoryBufferRef(Kept->Buffer->getBuffer(), Path),
            /*RequiresNullTerminator=*/false),
        Import.Start);
    if (HideSource)
      C.Diags.hideSource(Id);
    visit(Id, Kept);
  }

  /// \p Path's real path, or nullopt when it has none; kept in the
  /// module cache when there is one.
  std::optional<std::string> realPath(llvm::StringRef Path) {
    ModuleCache *Cache = C.Options.Modules;
    if (Cache) {
      auto It = Cache->RealPaths.find(Path);
      if (It != Cache->RealPaths.end())
        return It->second;
    }
    llvm::SmallString<256> Real;
    std::optional<std::string> R;
    if (!llvm::sys::fs::real_path(Path, Real))
      R = std::string(Real);
    if (Cache)
      Cache->RealPaths.emplace(Path.str(), R);
    return R;
  }
  /// \p Path's real path, else \p Path itself.
  std::string realPathOr(llvm::StringRef Path) {
    return realPath(Path).value_or(Path.str());
  }
  bool exists(llvm::StringRef Path) {
    ModuleCache *Cache = C.Options.Modules;
    if (!Cache)
      return llvm::sys::fs::exists(Path);
    auto It = Cache->Exists.find(Path);
    if (It == Cache->Exists.end())
      It = Cache->Exists.emplace(Path.str(), llvm::sys::fs::exists(Path)).first;
    return It->second;
  }

  std::string realPath(unsigned BufferId) {
    return realPathOr(C.SM.getMemoryBuffer(BufferId)->getBufferIdentifier());
  }

  /// Parses a module (or takes \p Kept's parse) and loads its imports.
  void visit(unsigned BufferId, ModuleCache::Entry *Kept) {
    std::string Key = realPath(BufferId);
    States[Key] = State::Loading;
    Chain.push_back(Key);
    unsigned ErrorsBefore = C.Diags.errorCount();
    size_t ReportedBefore = C.Diags.diagnostics().size();
    std::shared_ptr<const ast::Module> M;
    if (Kept && Kept->Module) {
      M = Kept->Module;
    } else {
      M = parseModule(BufferId, C.Diags, C.Options.Limits);
      if (Kept && C.Diags.diagnostics().size() == ReportedBefore)
        Kept->Module = M;
    }
    // An imported file that yields no declaration at all is likely not .mls
    // (a symlink to something else): quote it once, not line by line.
    if (BufferId != C.Program.MainBufferId && M->empty() &&
        C.Diags.errorCount() > ErrorsBefore)
      C.Diags.firstErrorOnly(BufferId);
    if (M->empty() && !C.Diags.hasErrors() &&
        BufferId == C.Program.MainBufferId) {
      llvm::SMLoc Start = llvm::SMLoc::getFromPointer(
          C.SM.getMemoryBuffer(BufferId)->getBufferStart());
      C.Diags.report(DiagKind::EmptyModule, {Start, Start},
                     "file declares nothing; a scenario file needs at least "
                     "one declaration");
    }
    for (const ast::ImportDecl &I : M->Imports)
      resolve(I, BufferId);
    States[Key] = State::Done;
    Chain.pop_back();
    C.Modules.push_back(std::move(M));
  }

  void resolve(const ast::ImportDecl &I, unsigned FromBuffer) {
    std::string Relative = llvm::join(I.Module.Parts, "/") + ".mls";
    std::vector<std::string> Dirs;
    llvm::StringRef From =
        C.SM.getMemoryBuffer(FromBuffer)->getBufferIdentifier();
    llvm::StringRef FromDir = llvm::sys::path::parent_path(From);
    Dirs.push_back(FromDir.empty() ? "." : FromDir.str());
    for (const std::string &D : C.Options.IncludeDirs)
      Dirs.push_back(D);
    Dirs.push_back(C.Options.DataDir);
    for (const std::string &D : Dirs) {
      llvm::SmallString<256> Candidate(D);
      llvm::sys::path::append(Candidate, Relative);
      // What exists is this import's module; if it is no regular file
      // (a folder, device, FIFO), reading it says so at the import.
      if (!exists(Candidate))
        continue;
      std::string Key = realPathOr(Candidate);
      auto It = States.find(Key);
      if (It == States.end()) {
        Names[Key] = I.Module.str();
        // A module that a symbolic link takes out of the folder it was
        // found in may be any file: its lines are never echoed.
        std::optional<std::string> RealDir = realPath(D);
        bool Outside =
            RealDir && !llvm::StringRef(Key).startswith(
                           *RealDir + llvm::sys::path::get_separator().str());
        loadFile(std::string(Candidate), I.Module.Range, Outside);
      } else if (It->second == State::Loading) {
        std::vector<std::string> Cycle;
        bool InCycle = false;
        for (const std::string &P : Chain) {
          InCycle = InCycle || P == Key;
          if (InCycle)
            Cycle.push_back(moduleName(P));
        }
        Cycle.push_back(moduleName(Key));
        C.Diags.report(
            DiagKind::ImportCycle, I.Module.Range,
            fmt::format("import cycle: {}", llvm::join(Cycle, " -> ")));
      }
      return;
    }
    C.Diags.report(DiagKind::ImportNotFound, I.Module.Range,
                   fmt::format("cannot find module `{}`: no `{}` in {}",
                               I.Module.str(), Relative,
                               llvm::join(Dirs, ", ")));
  }

  std::string moduleName(const std::string &RealPath) {
    auto It = Names.find(RealPath);
    if (It != Names.end())
      return It->second;
    return llvm::sys::path::stem(RealPath).str();
  }
};

} // namespace

bool runResolveImports(Compilation &C) {
  ImportResolver(C).run();
  return !C.Diags.hasErrors();
}

} // namespace mlsc
