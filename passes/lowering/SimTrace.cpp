//===- SimTrace.cpp - A trace of requests for the simulator to replay -----===//
//
// `simulate.trace = "traces/day1.csv"` names a CSV file of requests,
// relative to the folder of the file that declares it (never absolute,
// never climbing out with `..`, never through a symbolic link: a scenario
// file is often someone else's). It is read once, when the scenario is
// lowered, within MaxTraceBytes; kept in the source manager, so that a
// diagnostic points at its line and column and no output of the run may
// replace it. docs/simulator.md, "Replaying a trace".
//
// The header names the columns: `arrival_s` (seconds from the trace's
// start, in order), `prompt_tokens` (a shared prefix included) and
// `output_tokens`, and optionally `prefix` (an id shared by requests that
// open with the same `prefix_tokens`) and `class` (a class of the block's
// `classes`). Other columns are ignored.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include "frontend/SourceFile.h"

#include <fmt/format.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

namespace mlsc {

namespace {

/// The largest trace read: about 8 million requests of 30 bytes.
constexpr size_t MaxTraceBytes = 256u << 20;

class TraceReader {
public:
  TraceReader(LoweringContext &Ctx, graph::SimInputs &In,
              const ir::Field &Field)
      : Ctx(Ctx), In(In), Field(Field) {}

  bool run() {
    std::string Name = Field.Folded->Text;
    if (!checkName(Name))
      return false;
    llvm::SmallString<256> Path;
    unsigned Decl = Ctx.C.SM.FindBufferContainingLoc(Field.Range.Start);
    llvm::StringRef DeclName =
        Decl ? Ctx.C.SM.getMemoryBuffer(Decl)->getBufferIdentifier() : "";
    if (DeclName != "-")
      Path = llvm::sys::path::parent_path(DeclName);
    // No symbolic link below the declaring file's folder.
    llvm::SmallString<256> Walk = Path;
    for (auto It = llvm::sys::path::begin(Name),
              End = llvm::sys::path::end(Name);
         It != End; ++It) {
      llvm::sys::path::append(Walk, *It);
      bool Link = false;
      if (!llvm::sys::fs::is_symlink_file(Walk, Link) && Link)
        return fail(DiagKind::MalformedSimulation, Field.Range,
                    fmt::format("`trace = \"{}\"` goes through the symbolic "
                                "link `{}`; a scenario file reads traces "
                                "below its own folder only",
                                Name, Walk.str().str()));
    }
    llvm::sys::path::append(Path, Name);
    SourceRead R = readSourceFile(Path, MaxTraceBytes);
    if (!R.Buffer)
      return fail(R.Kind, Field.Range,
                  fmt::format("`trace = \"{}\"`: {}", Name, R.Why));
    unsigned ID =
        Ctx.C.SM.AddNewSourceBuffer(std::move(R.Buffer), Field.Range.Start);
    Text = Ctx.C.SM.getMemoryBuffer(ID)->getBuffer();
    In.ReplayName = Name;
    return parse();
  }

private:
  LoweringContext &Ctx;
  graph::SimInputs &In;
  const ir::Field &Field;
  llvm::StringRef Text;
  llvm::StringMap<uint32_t> Groups;

  bool fail(DiagKind K, llvm::SMRange At, std::string Message) {
    Ctx.C.Diags.report(K, At, std::move(Message));
    Ctx.Failed = true;
    return false;
  }

  llvm::SMRange rangeOf(llvm::StringRef Part) {
    return {llvm::SMLoc::getFromPointer(Part.begin()),
            llvm::SMLoc::getFromPointer(Part.end())};
  }

  bool checkName(const std::string &Name) {
    auto bad = [&](const char *Why) {
      return fail(DiagKind::MalformedSimulation, Field.Range,
                  fmt::format("`trace = \"{}\"` {}; a scenario file reads "
                              "traces below its own folder only",
                              Name, Why));
    };
    if (Name.empty())
      return bad("is empty");
    if (llvm::sys::path::is_absolute(Name) || Name[0] == '~')
      return bad("is an absolute path");
    for (auto It = llvm::sys::path::begin(Name),
              End = llvm::sys::path::end(Name);
         It != End; ++It)
      if (*It == "..")
        return bad("climbs out with `..`");
    return true;
  }

  bool parse() {
    llvm::SmallVector<llvm::StringRef, 0> Lines;
    Text.split(Lines, '\n');
    size_t L = 0;
    while (L < Lines.size() && Lines[L].trim().empty())
      ++L;
    if (L == Lines.size())
      return fail(DiagKind::MalformedTrace, Field.Range,
                  fmt::format("the trace `{}` is empty: it needs a header "
                              "(arrival_s,prompt_tokens,output_tokens) and "
                              "a request a line",
                              In.ReplayName));
    // The header: each column's index.
    llvm::SmallVector<llvm::StringRef, 8> Names;
    Lines[L].rtrim("\r").split(Names, ',');
    int Arrival = -1, Prompt = -1, Output = -1, Prefix = -1, Class = -1;
    for (size_t I = 0; I < Names.size(); ++I) {
      llvm::StringRef N = Names[I].trim();
      int *Col = N == "arrival_s"       ? &Arrival
                 : N == "prompt_tokens" ? &Prompt
                 : N == "output_tokens" ? &Output
                 : N == "prefix"        ? &Prefix
                 : N == "class"         ? &Class
                                        : nullptr;
      if (!Col)
        continue;
      if (*Col >= 0)
        return fail(DiagKind::MalformedTrace, rangeOf(Names[I]),
                    fmt::format("the column `{}` is named twice", N.str()));
      *Col = static_cast<int>(I);
    }
    for (auto [Col, What] :
         {std::pair{Arrival, "arrival_s"}, std::pair{Prompt, "prompt_tokens"},
          std::pair{Output, "output_tokens"}})
      if (Col < 0)
        return fail(DiagKind::MalformedTrace, rangeOf(Lines[L].rtrim("\r")),
                    fmt::format("the trace's header has no `{}` column; it "
                                "needs arrival_s, prompt_tokens and "
                                "output_tokens (and may have prefix and "
                                "class)",
                                What));
    if (Class >= 0 && In.Classes.empty())
      return fail(DiagKind::MalformedTrace, rangeOf(Names[Class]),
                  "the trace has a `class` column, and the `simulate` block "
                  "lists no `classes`; list them, or drop the column");
    int Needed = std::max({Arrival, Prompt, Output, Prefix, Class}) + 1;
    double PrefixTokens = 0;
    if (Prefix >= 0) {
      if (!Ctx.field(Ctx.Scenario, "simulate.prefix_tokens"))
        return fail(DiagKind::MissingInput, Field.Range,
                    "the trace has a `prefix` column: give the block "
                    "`prefix_tokens`, the length of each shared prefix");
      PrefixTokens = Ctx.foldedNumber(Ctx.Scenario, "simulate.prefix_tokens");
    }
    auto Rows = std::make_shared<graph::Trace>();
    double Last = 0;
    for (++L; L < Lines.size(); ++L) {
      llvm::StringRef Line = Lines[L].rtrim("\r");
      if (Line.trim().empty())
        continue;
      llvm::SmallVector<llvm::StringRef, 8> Cells;
      Line.split(Cells, ',');
      if (static_cast<int>(Cells.size()) < Needed)
        return fail(DiagKind::MalformedTrace, rangeOf(Line),
                    fmt::format("this request has {} columns; the header "
                                "names {}",
                                Cells.size(), Names.size()));
      graph::TraceRow Row;
      auto number = [&](int Col, const char *What, bool Whole, double &Out) {
        llvm::StringRef Cell = Cells[Col].trim();
        if (Cell.getAsDouble(Out) || !std::isfinite(Out) || Out < 0 ||
            (Whole && (Out < 1 || Out > 4e9 || Out != std::floor(Out))))
          return fail(DiagKind::MalformedTrace, rangeOf(Cells[Col]),
                      fmt::format("`{}` is `{}`; it must be {}", What,
                                  Cell.str(),
                                  Whole ? "a whole number of tokens from 1 "
                                          "to 4e9"
                                        : "a number of seconds >= 0"));
        return true;
      };
      double A = 0, P = 0, O = 0;
      if (!number(Arrival, "arrival_s", false, A) ||
          !number(Prompt, "prompt_tokens", true, P) ||
          !number(Output, "output_tokens", true, O))
        return false;
      if (A < Last)
        return fail(DiagKind::MalformedTrace, rangeOf(Cells[Arrival]),
                    fmt::format("arrival {} s comes before the previous "
                                "request's {} s; a trace is in arrival "
                                "order",
                                A, Last));
      Last = A;
      Row.Arrival = A;
      Row.Prompt = static_cast<uint32_t>(P);
      Row.Output = static_cast<uint32_t>(O);
      if (Prefix >= 0) {
        llvm::StringRef Id = Cells[Prefix].trim();
        if (!Id.empty()) {
          if (P <= PrefixTokens)
            return fail(DiagKind::MalformedTrace, rangeOf(Cells[Prompt]),
                        fmt::format("a prompt of {} tokens cannot open with "
                                    "a shared prefix of {} (`prefix_tokens`)",
                                    P, PrefixTokens));
          auto [It, New] =
              Groups.try_emplace(Id, static_cast<uint32_t>(Groups.size()));
          Row.Group = It->second;
        }
      }
      if (Class >= 0) {
        llvm::StringRef K = Cells[Class].trim();
        if (!K.empty()) {
          auto It = std::find_if(
              In.Classes.begin(), In.Classes.end(),
              [&](const graph::SimInputs::Class &C) { return C.Name == K; });
          if (It == In.Classes.end())
            return fail(DiagKind::MalformedTrace, rangeOf(Cells[Class]),
                        fmt::format("class `{}` is not among the block's "
                                    "`classes`",
                                    K.str()));
          Row.Class = static_cast<uint32_t>(It - In.Classes.begin());
        }
      }
      Rows->push_back(Row);
    }
    if (Rows->empty())
      return fail(DiagKind::MalformedTrace, Field.Range,
                  fmt::format("the trace `{}` has a header and no request",
                              In.ReplayName));
    In.ReplayGroups = static_cast<uint32_t>(Groups.size());
    In.Replay = std::move(Rows);
    return true;
  }
};

} // namespace

bool readSimTrace(LoweringContext &Ctx, graph::SimInputs &In) {
  const ir::Field *F = Ctx.Scenario.field("simulate.trace");
  if (!F || !F->Folded)
    return true;
  return TraceReader(Ctx, In, *F).run();
}

} // namespace mlsc
