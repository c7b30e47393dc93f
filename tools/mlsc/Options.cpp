//===- Options.cpp - Reading the command line from one table --------------===//
//
// Options.def lists every command and option once; this file parses argv
// with it (options before or after the command, `--name=VALUE` or
// `--name VALUE`), checks each option against the command it was given
// to, suggests the closest spelling for an unknown command or option, and
// writes `--help`. Every error is a diagnostic: `mlsc: error: ... [Kind]`.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"

#include "ir/Schema.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc::driver {

namespace {

struct CommandInfo {
  Command Id;
  const char *Name;
  const char *Arguments;
  const char *Formats; ///< "text,json"; "" for text only
  const char *Help;
};

struct OptionInfo {
  OptionId Id;
  const char *Spelling;
  const char *Value; ///< "" for a flag
  const char *Commands;
  const char *Help;
};

const CommandInfo Commands[] = {
#define COMMAND(Id, Name, Arguments, Formats, Help)                            \
  {Command::Id, Name, Arguments, Formats, Help},
#include "tools/mlsc/Options.def"
};

const OptionInfo Options[] = {
#define OPTION(Id, Spelling, Value, Commands, Help)                            \
  {OptionId::Id, Spelling, Value, Commands, Help},
#include "tools/mlsc/Options.def"
};

const CommandInfo &info(Command C) {
  return Commands[static_cast<unsigned>(C)];
}

/// Commands that read files: every command but `walls` and `help`.
bool readsFiles(Command C) {
  return C != Command::Walls && C != Command::Help &&
         C != Command::ExplainDiagnostic && C != Command::Completion &&
         C != Command::Lsp;
}

bool appliesTo(const OptionInfo &O, Command C) {
  llvm::StringRef List = O.Commands;
  if (List.empty())
    return true;
  if (List == "*")
    return readsFiles(C);
  llvm::SmallVector<llvm::StringRef, 8> Names;
  List.split(Names, ',');
  return llvm::is_contained(Names, info(C).Name);
}

std::string commandsOf(const OptionInfo &O) {
  if (llvm::StringRef(O.Commands) == "*")
    return "the commands that read files";
  std::string S = O.Commands;
  std::replace(S.begin(), S.end(), ',', ' ');
  std::vector<std::string> Words;
  for (llvm::StringRef W : llvm::split(S, ' '))
    Words.push_back("`" + W.str() + "`");
  return llvm::join(Words, ", ");
}

/// "; did you mean `X`?" when some candidate is close to \p Word.
std::string didYouMean(llvm::StringRef Word,
                       const std::vector<std::string> &Candidates) {
  std::string Close = closestMatch(Word, Candidates);
  return Close.empty() ? "" : fmt::format(" (did you mean `{}`?)", Close);
}

std::vector<std::string> commandNames() {
  std::vector<std::string> Names;
  for (const CommandInfo &C : Commands)
    Names.push_back(C.Name);
  return Names;
}

} // namespace

bool optionAppliesTo(OptionId Id, Command C) {
  return appliesTo(Options[static_cast<unsigned>(Id)], C);
}

unsigned daysInMonth(unsigned Year, unsigned Month) {
  static const unsigned Days[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  bool Leap = (Year % 4 == 0 && Year % 100 != 0) || Year % 400 == 0;
  return Month == 2 && Leap ? 29 : Days[Month - 1];
}

namespace {

/// "text, json, svg or vega"; "text only".
std::string formatList(const CommandInfo &C) {
  llvm::SmallVector<llvm::StringRef, 6> Formats;
  llvm::StringRef(C.Formats).split(Formats, ',');
  if (Formats.empty() || Formats.front().empty())
    return "text only";
  std::string Out;
  for (size_t I = 0; I < Formats.size(); ++I)
    Out += (I == 0                    ? ""
            : I + 1 == Formats.size() ? " or "
                                      : ", ") +
           Formats[I].str();
  return Out;
}

bool isDate(llvm::StringRef S) {
  if (S.size() != 10 || S[4] != '-' || S[7] != '-')
    return false;
  for (size_t I : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!llvm::isDigit(S[I]))
      return false;
  unsigned Year = 0, Month = 0, Day = 0;
  S.substr(0, 4).getAsInteger(10, Year);
  S.substr(5, 2).getAsInteger(10, Month);
  S.substr(8, 2).getAsInteger(10, Day);
  return Month >= 1 && Month <= 12 && Day >= 1 &&
         Day <= daysInMonth(Year, Month);
}

/// Applies one option's value; returns an exit code on a bad value, -1 on
/// success.
int apply(const OptionInfo &Opt, const std::string &V, DriverOptions &O) {
  auto bad = [&](const std::string &Why) {
    return usage(DiagKind::InvalidOption, Why);
  };
  switch (Opt.Id) {
  case OptionId::Format:
    if (V == "text")
      O.Format = OutputFormat::Text;
    else if (V == "json")
      O.Format = OutputFormat::Json;
    else if (V == "csv")
      O.Format = OutputFormat::Csv;
    else if (V == "svg")
      O.Format = OutputFormat::Svg;
    else if (V == "vega")
      O.Format = OutputFormat::Vega;
    else
      return bad(fmt::format("unknown --format `{}`; `{}` prints {}", V,
                             info(O.Cmd).Name, formatList(info(O.Cmd))));
    return -1;
  case OptionId::Leaves:
    O.Leaves = true;
    return -1;
  case OptionId::Jobs:
    if (llvm::StringRef(V).getAsInteger(10, O.Jobs) || O.Jobs < 1 ||
        O.Jobs > 1024)
      return bad("--jobs needs a whole number of threads, 1-1024");
    return -1;
  case OptionId::Output:
  case OptionId::OutputShort:
    if (V.empty())
      return usage(DiagKind::MissingArgument,
                   fmt::format("{} needs a file name", Opt.Spelling));
    O.Output = V;
    return -1;
  case OptionId::Plot:
    if (V.empty())
      return usage(DiagKind::MissingArgument, "--plot needs a plot's id");
    O.Plot = V;
    return -1;
  case OptionId::MaxPoints: {
    double N = 0;
    if (llvm::StringRef(V).getAsDouble(N) || !(N >= 1) || N > 1e12)
      return bad("--max-points needs a number of points, 1 to 1e12");
    O.Compile.MaxGridPoints = std::floor(N);
    return -1;
  }
  case OptionId::Force:
    O.Force = true;
    return -1;
  case OptionId::FmtCheck:
    O.Check = true;
    return -1;
  case OptionId::Expression:
    if (llvm::StringRef(V).trim().empty())
      return bad("-e needs an expression (`-e 'chat.ttft.p99 / 2'`)");
    if (V.find_first_of("\n\r") != std::string::npos)
      return bad("-e takes an expression on one line");
    O.Expressions.push_back(V);
    return -1;
  case OptionId::RequestsCsv:
    if (V.empty())
      return usage(DiagKind::MissingArgument,
                   "--requests-csv needs a file name");
    O.RequestsCsv = V;
    return -1;
  case OptionId::TimelineCsv:
    if (V.empty())
      return usage(DiagKind::MissingArgument,
                   "--timeline-csv needs a file name");
    O.TimelineCsv = V;
    return -1;
  case OptionId::NoProgress:
    O.Progress = false;
    return -1;
  case OptionId::AsOf:
    if (!isDate(V))
      return bad(fmt::format("--as-of needs a date YYYY-MM-DD, got `{}`", V));
    O.AsOf = V;
    return -1;
  case OptionId::MaxAgeYears:
    if (llvm::StringRef(V).getAsInteger(10, O.MaxAgeYears) ||
        O.MaxAgeYears < 0 || O.MaxAgeYears > 100)
      return bad("--max-age-years needs a whole number of years, 0-100");
    return -1;
  case OptionId::MaxPriceAgeYears:
    if (llvm::StringRef(V).getAsInteger(10, O.MaxPriceAgeYears) ||
        O.MaxPriceAgeYears < 0 || O.MaxPriceAgeYears > 100)
      return bad("--max-price-age-years needs a whole number of years, 0-100");
    return -1;
  case OptionId::Emit:
    if (!llvm::is_contained(emitKinds(), V))
      return bad(fmt::format("unknown --emit kind `{}`; expected {}", V,
                             llvm::join(emitKinds(), ", ")));
    O.Emit = V;
    return -1;
  case OptionId::PrintIRAfter: {
    bool Known = V == "all";
    std::vector<std::string> Names;
    for (const PassInfo &P : allPasses()) {
      Known = Known || V == P.Flag;
      Names.push_back(P.Flag);
    }
    if (!Known)
      return bad(fmt::format("unknown pass `{}`{}; the passes are {}", V,
                             didYouMean(V, Names), llvm::join(Names, ", ")));
    O.Compile.PrintIRAfter = V;
    return -1;
  }
  case OptionId::PrintImported:
    O.Compile.PrintImported = true;
    return -1;
  case OptionId::VerifyDiagnostics:
    O.Verify = true;
    return -1;
  case OptionId::Include:
    O.Compile.IncludeDirs.push_back(V);
    return -1;
  case OptionId::DataDir:
    O.Compile.DataDir = V;
    return -1;
  case OptionId::NoPrelude:
    O.Compile.LoadPrelude = false;
    return -1;
  case OptionId::ListDiagnostics:
  case OptionId::ListPasses:
  case OptionId::ListUnits:
  case OptionId::ListSchemas:
  case OptionId::ListFormulas:
  case OptionId::ListMetrics:
  case OptionId::ListDefaults:
  case OptionId::ListOptions:
    O.List = llvm::StringRef(Opt.Spelling).drop_front(7).str();
    return -1;
  case OptionId::Version:
    O.Version = true;
    return -1;
  case OptionId::HelpOption:
    O.Help = true;
    return -1;
  }
  return -1;
}

/// Wraps \p Text to fit after a column of \p Indent characters.
std::string wrap(llvm::StringRef Text, size_t Indent) {
  std::string Out, Line;
  for (llvm::StringRef Word : llvm::split(Text, ' ')) {
    if (!Line.empty() && Indent + Line.size() + 1 + Word.size() > 78) {
      Out += Line + "\n" + std::string(Indent, ' ');
      Line.clear();
    }
    Line += (Line.empty() ? "" : " ") + Word.str();
  }
  return Out + Line;
}

void entry(std::string &Out, const std::string &Head, llvm::StringRef Help) {
  const size_t Column = 26;
  Out += "  " + Head;
  if (Head.size() + 2 >= Column)
    Out += "\n" + std::string(Column, ' ');
  else
    Out += std::string(Column - 2 - Head.size(), ' ');
  Out += wrap(Help, Column) + "\n";
}

std::string optionHead(const OptionInfo &O) {
  std::string Head = O.Spelling;
  if (llvm::StringRef(O.Value).size())
    // A short option takes its value as the next word (`-I DIR`, `-o
    // FILE`), a long one after `=`.
    Head += (Head.size() == 2 ? " " : "=") + std::string(O.Value);
  return Head;
}

const char *const ExitCodes =
    "\nexit codes: 0 success, 1 errors in the input, 2 usage error,\n"
    "            3 a checked condition failed or could not be evaluated\n";

/// `mlsc help COMMAND`: the command, its arguments and the options that
/// apply to it.
std::string commandHelp(const CommandInfo &C) {
  std::string Out =
      fmt::format("usage: mlsc {}{}{} [options]\n\n", C.Name,
                  llvm::StringRef(C.Arguments).empty() ? "" : " ", C.Arguments);
  Out += "  " + wrap(C.Help, 2) + "\n\noptions:\n";
  for (const OptionInfo &O : Options) {
    if (llvm::StringRef(O.Commands).empty() || !appliesTo(O, C.Id))
      continue;
    std::string Help = O.Help;
    if (O.Id == OptionId::Format) {
      llvm::SmallVector<llvm::StringRef, 4> Formats;
      llvm::StringRef(C.Formats).split(Formats, ',');
      Help = "output format: " + llvm::join(Formats, ", ") +
             " (text is the default)";
    }
    entry(Out, optionHead(O), Help);
  }
  return Out + ExitCodes;
}

} // namespace

std::string optionsTable() {
  std::string Out;
  for (const CommandInfo &C : Commands)
    Out += fmt::format("command\t{}\t{}\t{}\t{}\n", C.Name, C.Arguments,
                       C.Formats, C.Help);
  for (const OptionInfo &O : Options)
    Out +=
        fmt::format("option\t{}\t{}\t{}\n", optionHead(O), O.Commands, O.Help);
  return Out;
}

void reportError(DiagKind Kind, const std::string &File,
                 const std::string &Message) {
  llvm::SourceMgr SM;
  DiagnosticEngine Diags(SM);
  Diags.reportFile(Kind, File, Message);
  Diags.flush(llvm::errs());
}

int usage(DiagKind Kind, const std::string &Message) {
  reportError(Kind, "", Message);
  llvm::errs() << "run `mlsc --help` for usage\n";
  return UsageError;
}

std::string helpText(llvm::StringRef Topic) {
  for (const CommandInfo &C : Commands)
    if (Topic == C.Name && C.Id != Command::Help)
      return commandHelp(C);
  std::string Out = "usage: mlsc [COMMAND] [options] FILE\n\ncommands:\n";
  for (const CommandInfo &C : Commands)
    entry(Out,
          std::string(C.Name) +
              (llvm::StringRef(C.Arguments).empty() ? "" : " ") + C.Arguments,
          C.Help);
  Out += "\nFILE may be `-` for stdin. Options may come before or after the "
         "command.\n`mlsc help COMMAND` shows one command and its "
         "options.\n\noptions:\n";
  for (const OptionInfo &O : Options) {
    std::string Help = O.Help;
    if (llvm::StringRef(O.Commands).size() && O.Commands != std::string("*"))
      Help = llvm::join(llvm::split(O.Commands, ','), ", ") + ": " + Help;
    entry(Out, optionHead(O), Help);
  }
  return Out + ExitCodes;
}

int parseArgs(int Argc, char **Argv, DriverOptions &O) {
  struct Given {
    const OptionInfo *Opt;
    std::string Value;
  };
  std::vector<Given> Seen;
  std::vector<std::string> Positional;
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef A = Argv[I];
    if (A == "-" || !A.startswith("-")) {
      Positional.push_back(A.str());
      continue;
    }
    if (A == "-h")
      A = "--help";
    const OptionInfo *Match = nullptr;
    std::string Value;
    for (const OptionInfo &Opt : Options) {
      llvm::StringRef S = Opt.Spelling;
      bool TakesValue = llvm::StringRef(Opt.Value).size();
      if (A == S) {
        Match = &Opt;
        if (TakesValue) {
          if (I + 1 >= Argc)
            return usage(DiagKind::MissingArgument,
                         fmt::format("`{}` needs a value, {}", S, Opt.Value));
          Value = Argv[++I];
        }
        break;
      }
      if (TakesValue && S == "-I" && A.startswith("-I")) {
        Match = &Opt;
        Value = A.drop_front(2).str();
        break;
      }
      if (TakesValue && A.startswith(S) &&
          A.drop_front(S.size()).startswith("=")) {
        Match = &Opt;
        Value = A.drop_front(S.size() + 1).str();
        break;
      }
    }
    if (!Match) {
      std::vector<std::string> Spellings;
      for (const OptionInfo &Opt : Options)
        Spellings.push_back(Opt.Spelling);
      llvm::StringRef Name = A.split('=').first;
      return usage(DiagKind::UnknownOption,
                   fmt::format("unknown option `{}`{}", A.str(),
                               didYouMean(Name, Spellings)));
    }
    Seen.push_back({Match, Value});
  }

  // The command: the first positional argument when it names one. A word
  // that is neither a command nor a file (no `.`, no `/`, not on disk) is
  // taken for a mistyped command rather than a missing file.
  bool IsCommand = false;
  if (!Positional.empty()) {
    llvm::StringRef First = Positional.front();
    for (const CommandInfo &C : Commands)
      if (First == C.Name) {
        O.Cmd = C.Id;
        IsCommand = true;
      }
    if (IsCommand) {
      Positional.erase(Positional.begin());
    } else if (First != "-" && !First.contains('.') && !First.contains('/') &&
               !llvm::sys::fs::exists(First)) {
      return usage(DiagKind::UnknownCommand,
                   fmt::format("`{}` is neither a command nor a file{}; "
                               "the commands are {}",
                               First.str(), didYouMean(First, commandNames()),
                               llvm::join(commandNames(), ", ")));
    }
  }

  // An option that acts by itself (--version, --list-*) takes no command,
  // argument or other option; --help takes a command (`eval --help`).
  for (const Given &G : Seen)
    if (llvm::StringRef(G.Opt->Commands).empty() &&
        G.Opt->Id != OptionId::HelpOption &&
        (Seen.size() > 1 || !Positional.empty()))
      return usage(DiagKind::UnexpectedArgument,
                   fmt::format("`{}` stands alone: it takes no command, "
                               "argument or other option",
                               G.Opt->Spelling));

  for (const Given &G : Seen) {
    if (!appliesTo(*G.Opt, O.Cmd))
      return usage(DiagKind::InvalidOption,
                   fmt::format("`{}` does not apply to `{}`; it applies to {}",
                               G.Opt->Spelling, info(O.Cmd).Name,
                               commandsOf(*G.Opt)));
    if (int Code = apply(*G.Opt, G.Value, O); Code >= 0)
      return Code;
  }
  // `mlsc eval --help` is `mlsc help eval`.
  if (O.Help && IsCommand && O.Cmd != Command::Help)
    O.Target = info(O.Cmd).Name;
  if (O.Help || O.Version || !O.List.empty())
    return -1;

  // --format: only what the command prints.
  if (O.Format != OutputFormat::Text) {
    const char *Name = O.Format == OutputFormat::Json  ? "json"
                       : O.Format == OutputFormat::Csv ? "csv"
                       : O.Format == OutputFormat::Svg ? "svg"
                                                       : "vega";
    llvm::SmallVector<llvm::StringRef, 4> Formats;
    llvm::StringRef(info(O.Cmd).Formats).split(Formats, ',');
    if (!llvm::is_contained(Formats, Name))
      return usage(DiagKind::InvalidOption,
                   fmt::format("`{}` does not print {}; it prints {}",
                               info(O.Cmd).Name, Name,
                               formatList(info(O.Cmd))));
  }

  // The positional arguments each command takes.
  size_t Next = 0;
  auto take = [&](std::string &Out) {
    if (Next < Positional.size())
      Out = Positional[Next++];
  };
  switch (O.Cmd) {
  case Command::Help:
    O.Help = true;
    take(O.Target);
    if (!O.Target.empty() && !llvm::is_contained(commandNames(), O.Target))
      return usage(DiagKind::UnknownCommand,
                   fmt::format("no command `{}`{}; the commands are {}",
                               O.Target, didYouMean(O.Target, commandNames()),
                               llvm::join(commandNames(), ", ")));
    break;
  case Command::Walls:
  case Command::Lsp:
    break;
  case Command::Completion:
    take(O.Target);
    if (O.Target.empty())
      return usage(DiagKind::MissingArgument,
                   "completion needs a shell: `mlsc completion bash` or "
                   "`mlsc completion zsh`");
    break;
  case Command::ExplainDiagnostic:
    take(O.Target);
    if (O.Target.empty())
      return usage(DiagKind::MissingArgument,
                   "explain-diagnostic needs a kind, the name in brackets "
                   "after a message (`UnknownUnit`)");
    break;
  case Command::Fmt:
    if (Positional.empty())
      return usage(DiagKind::MissingArgument,
                   "fmt needs the files or folders to format (`-`: standard "
                   "input to standard output)");
    [[fallthrough]];
  case Command::Report:
    if (Positional.empty())
      return usage(DiagKind::MissingArgument,
                   "report needs the .mls files to report on");
    [[fallthrough]];
  case Command::Audit:
  case Command::Validate:
    O.AuditPaths.assign(Positional.begin(), Positional.end());
    Next = Positional.size();
    break;
  case Command::Compile:
  case Command::Eval:
  case Command::Check:
    take(O.Input);
    break;
  case Command::Explain:
  case Command::Sensitivity:
    take(O.Input);
    take(O.Target);
    break;
  case Command::Solve:
  case Command::Sweep:
    take(O.Input);
    take(O.QueryName);
    break;
  }
  if (Next < Positional.size())
    return usage(DiagKind::UnexpectedArgument,
                 fmt::format("unexpected argument `{}`; `{}` takes {}",
                             Positional[Next], info(O.Cmd).Name,
                             llvm::StringRef(info(O.Cmd).Arguments).empty()
                                 ? std::string("no argument")
                                 : info(O.Cmd).Arguments));
  if (readsFiles(O.Cmd) && O.Cmd != Command::Audit &&
      O.Cmd != Command::Validate && O.Cmd != Command::Fmt &&
      O.Cmd != Command::Report && O.Input.empty())
    return usage(DiagKind::MissingArgument, "no input file");
  if (O.Cmd == Command::Explain && O.Target.empty())
    return usage(DiagKind::MissingArgument,
                 "explain needs SCENARIO.METRIC after the file");
  if (O.Cmd == Command::Explain && llvm::StringRef(O.Target).endswith("."))
    return usage(DiagKind::MissingArgument,
                 fmt::format("explain needs SCENARIO.METRIC, a scenario and "
                             "one of its values, or the name of a let; got "
                             "`{}`",
                             O.Target));
  bool Plotting =
      O.Format == OutputFormat::Svg || O.Format == OutputFormat::Vega;
  if (!O.Plot.empty() && !Plotting)
    return usage(DiagKind::InvalidOption,
                 "--plot chooses what --format=svg or --format=vega prints");
  if (O.Cmd == Command::Sweep && Plotting && !O.Output.empty())
    return usage(DiagKind::InvalidOption,
                 "a sweep's plot goes to the standard output; --output "
                 "writes its table");
  if (O.Cmd == Command::Sensitivity && O.Target.empty())
    return usage(DiagKind::MissingArgument,
                 "sensitivity needs a scenario: `mlsc sensitivity FILE "
                 "SCENARIO[.METRIC]`");
  return -1;
}

} // namespace mlsc::driver
