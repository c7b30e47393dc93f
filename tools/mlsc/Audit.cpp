//===- Audit.cpp - `mlsc audit`: the provenance of every value ------------===//
//
// Collects the values of each audited file (runtime/Audit.h) and prints
// them as text, CSV (RFC 4180) or JSON (docs/json-output.md). Exit 3 when a
// value has no source.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"

#include "runtime/Audit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

namespace mlsc::driver {

bool collectFiles(const DriverOptions &O, const std::string &Default,
                  std::vector<std::string> &Files) {
  std::vector<std::string> Roots = O.AuditPaths;
  if (Roots.empty())
    Roots.push_back(Default);
  std::vector<std::string> Found;
  for (const std::string &R : Roots) {
    if (!llvm::sys::fs::exists(R)) {
      reportError(DiagKind::FileNotFound, R, "no such file or folder");
      return false;
    }
    expandPath(R, Found);
  }
  // A file named twice (or inside a folder also named) is read once.
  for (const std::string &F : Found)
    if (!llvm::is_contained(Files, F))
      Files.push_back(F);
  return true;
}

bool compileEach(const DriverOptions &O, const std::vector<std::string> &Files,
                 llvm::function_ref<void(Compilation &C, bool Compiled,
                                         const std::string &Shown)>
                     Each) {
  bool AllOK = true;
  std::string Prefix = O.Compile.DataDir + "/";
  for (const std::string &F : Files) {
    std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(O, F);
    if (!Buf) {
      AllOK = false;
      continue;
    }
    Compilation C;
    C.Options = O.Compile;
    bool Compiled = compile(C, std::move(Buf));
    AllOK &= Compiled;
    C.Diags.flush(llvm::errs());
    Each(C, Compiled,
         llvm::StringRef(F).startswith(Prefix) ? F.substr(Prefix.size()) : F);
  }
  return AllOK;
}

void expandPath(const std::string &Path, std::vector<std::string> &Out) {
  if (!llvm::sys::fs::is_directory(Path)) {
    Out.push_back(Path);
    return;
  }
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::recursive_directory_iterator It(Path, EC,
                                                      /*follow=*/false),
       End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(".mls"))
      Found.push_back(It->path());
  std::sort(Found.begin(), Found.end());
  Out.insert(Out.end(), Found.begin(), Found.end());
}

namespace {

std::string today() {
  std::time_t Now = std::time(nullptr);
  std::tm UTC{};
  gmtime_r(&Now, &UTC);
  return fmt::format("{:04}-{:02}-{:02}", UTC.tm_year + 1900, UTC.tm_mon + 1,
                     UTC.tm_mday);
}

/// RFC 4180: quote fields that hold commas, quotes or newlines.
std::string csv(const std::string &S) {
  if (S.find_first_of(",\"\n") == std::string::npos)
    return S;
  std::string Q = "\"";
  for (char C : S)
    Q += C == '"' ? std::string("\"\"") : std::string(1, C);
  return Q + "\"";
}

void printText(const std::vector<AuditRecord> &Records,
               const std::string &Cutoff, const std::string &PriceCutoff,
               llvm::raw_ostream &OS) {
  for (const AuditRecord &R : Records) {
    OS << R.File << ":" << R.Line << "  " << R.EntityKind << " " << R.Entity
       << "." << R.Field << " = " << R.Display;
    if (R.Source)
      OS << "  from " << R.Source->Name << " (" << R.Source->Kind
         << ", verified "
         << (R.Source->Verified.empty() ? "never" : R.Source->Verified) << ")";
    else if (R.Derived)
      OS << "  = " << R.DerivedFrom;
    OS << R.flags() << "\n";
  }
  AuditSummary S = summarize(Records);
  OS << S.Values << " values: " << S.Unsourced << " without a source, "
     << S.Derived << " derived, " << S.Estimates << " estimates, " << S.Stale
     << " with a source not verified since " << Cutoff << ", " << S.StalePrices
     << " prices undated or published before " << PriceCutoff << "\n";
}

void printCSV(const std::vector<AuditRecord> &Records, llvm::raw_ostream &OS) {
  OS << "entity,entity_kind,field,value,unit,display,file,line,source,"
        "source_kind,source_title,source_url,verified,flags\n";
  for (const AuditRecord &R : Records) {
    AuditSource None;
    const AuditSource &Src = R.Source ? *R.Source : None;
    std::string Flags = llvm::StringRef(R.flags()).ltrim(' ').str();
    OS << csv(R.Entity) << "," << R.EntityKind << "," << csv(R.Field) << ","
       << fmt::format("{:.17g}", R.Value) << "," << csv(R.Unit) << ","
       << csv(R.Display) << "," << csv(R.File) << "," << R.Line << ","
       << Src.Name << "," << csv(Src.Kind) << "," << csv(Src.Title) << ","
       << csv(Src.Url) << "," << Src.Verified << "," << csv(Flags) << "\n";
  }
}

/// A string, or null when it is empty.
void stringOrNull(llvm::json::OStream &J, llvm::StringRef Key,
                  const std::string &S) {
  if (S.empty())
    J.attribute(Key, nullptr);
  else
    J.attribute(Key, S);
}

void printJSON(const std::vector<AuditRecord> &Records, llvm::raw_ostream &OS) {
  llvm::json::OStream J(OS, 2);
  J.object([&] {
    formatVersion(J);
    J.attributeArray("records", [&] {
      for (const AuditRecord &R : Records)
        J.object([&] {
          J.attribute("entity", R.Entity);
          J.attribute("entity_kind", R.EntityKind);
          J.attribute("field", R.Field);
          number(J, "value", R.Value);
          J.attribute("unit", R.Unit);
          J.attribute("display", R.Display);
          J.attribute("file", R.File);
          J.attribute("line", static_cast<int64_t>(R.Line));
          if (R.Source)
            J.attributeObject("source", [&] {
              J.attribute("name", R.Source->Name);
              J.attribute("kind", R.Source->Kind);
              J.attribute("title", R.Source->Title);
              stringOrNull(J, "url", R.Source->Url);
              stringOrNull(J, "verified", R.Source->Verified);
              stringOrNull(J, "published", R.Source->Published);
            });
          else
            J.attribute("source", nullptr);
          if (R.Derived)
            J.attribute("derived_from", R.DerivedFrom);
          J.attribute("estimate", R.Estimate);
          J.attribute("stale", R.Stale);
          J.attribute("stale_price", R.StalePrice);
        });
    });
  });
  OS << "\n";
}

} // namespace

int auditCommand(const DriverOptions &O) {
  std::vector<std::string> Files;
  if (!collectFiles(O, O.Compile.DataDir + "/registries", Files))
    return InputErrors;
  // The options table checked that --as-of is a date.
  std::string AsOf = O.AsOf.empty() ? today() : O.AsOf;
  // The same day N years earlier; 29 February becomes the 28th in a year
  // without it.
  auto yearsBefore = [&](int N) {
    int Year = std::max(0, std::stoi(AsOf.substr(0, 4)) - N);
    unsigned Month = std::stoi(AsOf.substr(5, 2));
    unsigned Day = std::min<unsigned>(std::stoi(AsOf.substr(8, 2)),
                                      daysInMonth(Year, Month));
    return fmt::format("{:04}-{:02}-{:02}", Year, Month, Day);
  };
  std::string Cutoff = yearsBefore(O.MaxAgeYears);
  std::string PriceCutoff = yearsBefore(O.MaxPriceAgeYears);
  std::vector<AuditRecord> Records;
  // A file that does not compile is still audited as far as it was read.
  bool Errors = !compileEach(
      O, Files, [&](Compilation &C, bool, const std::string &Shown) {
        collectAudit(C.Program, C.SM, C.Program.MainBufferId, Shown, Cutoff,
                     PriceCutoff, Records);
      });
  if (O.Format == OutputFormat::Json)
    printJSON(Records, llvm::outs());
  else if (O.Format == OutputFormat::Csv)
    printCSV(Records, llvm::outs());
  else
    printText(Records, Cutoff, PriceCutoff, llvm::outs());
  if (Errors)
    return InputErrors;
  return summarize(Records).Unsourced ? CheckFailed : Success;
}

} // namespace mlsc::driver
