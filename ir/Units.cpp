//===- Units.cpp - The unit table and unit-expression parser --------------===//

#include "ir/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

namespace mlsc {

namespace {

enum class Prefixes {
  None,   ///< no prefix allowed
  SI,     ///< p n u m c k M G T P E
  SIUp,   ///< k M G T P E
  SIData, ///< k M G T P E and Ki Mi Gi Ti Pi Ei
};

struct UnitDef {
  const char *Symbol;
  Prefixes Allowed;
  double Scale;
  Dimension Dim;
  const char *Meaning;
};

struct PrefixDef {
  const char *Symbol;
  double Scale;
  bool Binary;
  bool Small; ///< below one (only for Prefixes::SI)
};

const PrefixDef PrefixTable[] = {
    // Two-letter binary prefixes first, so `KiB` is not read as `K` + `iB`.
    {"Ki", 1024.0, true, false},
    {"Mi", 1048576.0, true, false},
    {"Gi", 1073741824.0, true, false},
    {"Ti", 1099511627776.0, true, false},
    {"Pi", 1125899906842624.0, true, false},
    {"Ei", 1152921504606846976.0, true, false},
    {"p", 1e-12, false, true},
    {"n", 1e-9, false, true},
    {"u", 1e-6, false, true},
    {"m", 1e-3, false, true},
    {"c", 1e-2, false, true},
    {"k", 1e3, false, false},
    {"M", 1e6, false, false},
    {"G", 1e9, false, false},
    {"T", 1e12, false, false},
    {"P", 1e15, false, false},
    {"E", 1e18, false, false},
};

Dimension dim(BaseDim D, int P = 1) { return Dimension::base(D, P); }

const std::vector<UnitDef> &units() {
  static const std::vector<UnitDef> Table = [] {
    const Dimension S = dim(BaseDim::Time);
    const Dimension J = dim(BaseDim::Energy);
    const Dimension B = dim(BaseDim::Data);
    const Dimension F = dim(BaseDim::Compute);
    const Dimension PerS = dim(BaseDim::Time, -1);
    return std::vector<UnitDef>{
        // time
        {"s", Prefixes::SI, 1.0, S, "second"},
        {"min", Prefixes::None, 60.0, S, "minute"},
        {"h", Prefixes::None, 3600.0, S, "hour"},
        {"hr", Prefixes::None, 3600.0, S, "hour"},
        {"day", Prefixes::None, 86400.0, S, "day (86,400 s)"},
        {"week", Prefixes::None, 604800.0, S, "week (7 days)"},
        {"year", Prefixes::None, 31536000.0, S, "year (365 days, 8,760 h)"},
        {"yr", Prefixes::None, 31536000.0, S, "year (365 days)"},
        {"Hz", Prefixes::SI, 1.0, PerS, "hertz (1/s)"},
        // length and volume
        {"m", Prefixes::SI, 1.0, dim(BaseDim::Length), "metre"},
        {"L", Prefixes::SI, 1e-3, dim(BaseDim::Length, 3), "litre (1e-3 m^3)"},
        // mass
        {"g", Prefixes::SI, 1e-3, dim(BaseDim::Mass), "gram"},
        {"t", Prefixes::SIUp, 1e3, dim(BaseDim::Mass), "tonne (1,000 kg)"},
        // energy and power
        {"J", Prefixes::SI, 1.0, J, "joule"},
        {"Wh", Prefixes::SIUp, 3600.0, J, "watt-hour (3,600 J)"},
        {"W", Prefixes::SI, 1.0, J * PerS, "watt (J/s)"},
        // data
        {"B", Prefixes::SIData, 1.0, B, "byte"},
        {"b", Prefixes::SIData, 0.125, B, "bit (1/8 B)"},
        {"bit", Prefixes::SIData, 0.125, B, "bit (1/8 B)"},
        {"bps", Prefixes::SIUp, 0.125, B * PerS, "bit per second"},
        {"Bps", Prefixes::SIData, 1.0, B * PerS, "byte per second"},
        // compute
        {"FLOP", Prefixes::SIUp, 1.0, F, "floating-point operation"},
        {"FLOPS", Prefixes::SIUp, 1.0, F * PerS, "FLOP per second"},
        {"OP", Prefixes::SIUp, 1.0, F, "operation (same dimension as FLOP)"},
        {"OPS", Prefixes::SIUp, 1.0, F * PerS, "operation per second (TOPS)"},
        // money
        {"USD", Prefixes::SIUp, 1.0, dim(BaseDim::Money), "US dollar"},
        // counts
        {"tok", Prefixes::SIUp, 1.0, dim(BaseDim::Token), "token"},
        {"token", Prefixes::SIUp, 1.0, dim(BaseDim::Token), "token"},
        {"tokens", Prefixes::SIUp, 1.0, dim(BaseDim::Token), "token"},
        {"req", Prefixes::SIUp, 1.0, dim(BaseDim::Request), "request"},
        {"request", Prefixes::None, 1.0, dim(BaseDim::Request), "request"},
        {"requests", Prefixes::None, 1.0, dim(BaseDim::Request), "request"},
        {"sample", Prefixes::SIUp, 1.0, dim(BaseDim::Sample), "sample"},
        {"samples", Prefixes::SIUp, 1.0, dim(BaseDim::Sample), "sample"},
        {"img", Prefixes::SIUp, 1.0, dim(BaseDim::Sample), "image (a sample)"},
        // dimensionless
        {"%", Prefixes::None, 0.01, Dimension(), "percent (0.01)"},
    };
  }();
  return Table;
}

bool prefixAllowed(const PrefixDef &P, Prefixes Allowed) {
  switch (Allowed) {
  case Prefixes::None:
    return false;
  case Prefixes::SI:
    return !P.Binary;
  case Prefixes::SIUp:
    return !P.Binary && !P.Small;
  case Prefixes::SIData:
    return !P.Small;
  }
  return false;
}

const char *prefixesName(Prefixes Allowed) {
  switch (Allowed) {
  case Prefixes::None:
    return "none";
  case Prefixes::SI:
    return "SI";
  case Prefixes::SIUp:
    return "SI>=k";
  case Prefixes::SIData:
    return "SI>=k, binary";
  }
  return "none";
}

const UnitDef *findExact(llvm::StringRef Symbol) {
  // Every literal with a unit asks, once per prefix it might carry: a hash
  // lookup, not a walk of the table. Built once; the first symbol wins.
  static const llvm::StringMap<const UnitDef *> BySymbol = [] {
    llvm::StringMap<const UnitDef *> M;
    for (const UnitDef &U : units())
      M.try_emplace(U.Symbol, &U);
    return M;
  }();
  return BySymbol.lookup(Symbol);
}

/// Resolves one atom without its power: exact symbol first, then prefix +
/// symbol. `min` is a minute, `ms` a millisecond, `mm` a millimetre.
std::optional<Unit> resolveSymbol(llvm::StringRef Symbol) {
  if (const UnitDef *U = findExact(Symbol))
    return Unit{U->Scale, U->Dim};
  for (const PrefixDef &P : PrefixTable) {
    if (!Symbol.startswith(P.Symbol))
      continue;
    const UnitDef *U = findExact(Symbol.drop_front(strlen(P.Symbol)));
    if (U && prefixAllowed(P, U->Allowed))
      return Unit{P.Scale * U->Scale, U->Dim};
  }
  return std::nullopt;
}

/// Every spelling the table accepts, for "did you mean".
const std::vector<std::string> &allSpellings() {
  static const std::vector<std::string> Spellings = [] {
    std::vector<std::string> R;
    for (const UnitDef &U : units()) {
      R.push_back(U.Symbol);
      for (const PrefixDef &P : PrefixTable)
        if (prefixAllowed(P, U.Allowed))
          R.push_back(std::string(P.Symbol) + U.Symbol);
    }
    return R;
  }();
  return Spellings;
}

/// For a known unit under a prefix it does not take (`KiW`, `mFLOP`): the
/// message, and a spelling with a prefix it does take (`kW`, `MFLOP`) or "".
std::optional<std::pair<std::string, std::string>>
disallowedPrefix(llvm::StringRef Symbol) {
  for (const PrefixDef &P : PrefixTable) {
    if (!Symbol.startswith(P.Symbol))
      continue;
    llvm::StringRef Base = Symbol.drop_front(strlen(P.Symbol));
    const UnitDef *U = findExact(Base);
    if (!U || prefixAllowed(P, U->Allowed))
      continue;
    std::string Message = "unit `" + Base.str() + "` does not take the " +
                          (P.Binary ? "binary " : "") + "prefix `" + P.Symbol +
                          "`";
    // Ki -> k, Mi -> M (binary for decimal); m -> M (milli for mega).
    std::string Instead;
    if (P.Binary)
      Instead = P.Symbol[0] == 'K' ? "k" : std::string(1, P.Symbol[0]);
    else if (llvm::StringRef(P.Symbol) == "m")
      Instead = "M";
    for (const PrefixDef &Q : PrefixTable)
      if (Instead == Q.Symbol && prefixAllowed(Q, U->Allowed))
        return std::make_pair(Message, Instead + Base.str());
    return std::make_pair(Message, std::string());
  }
  return std::nullopt;
}

/// The spelling the table accepts that \p Atom is but for case (`gb` ->
/// `GB`, `w` -> `W`, `kw` -> `kW`), or "". Of several (`mb`: `MB` and
/// `Mb`), the one with the most capitals: bytes before bits, the large
/// prefixes before the small ones that rarely go with them.
std::string caseFixed(llvm::StringRef Atom) {
  std::string Best;
  int BestUpper = -1;
  for (const std::string &S : allSpellings())
    if (llvm::StringRef(S).equals_insensitive(Atom)) {
      int Upper = static_cast<int>(
          std::count_if(S.begin(), S.end(), [](char C) { return isupper(C); }));
      if (Upper > BestUpper) {
        Best = S;
        BestUpper = Upper;
      }
    }
  return Best;
}

/// A unit written as a word (`Watts`, `seconds`, `gigabytes`), singular or
/// plural, any case, with a word prefix: its symbol, or "".
std::string fromWord(llvm::StringRef Atom) {
  static const std::pair<const char *, const char *> Words[] = {
      {"watt", "W"},    {"joule", "J"},       {"byte", "B"},
      {"bit", "b"},     {"second", "s"},      {"sec", "s"},
      {"hour", "h"},    {"hr", "h"},          {"minute", "min"},
      {"token", "tok"}, {"request", "req"},   {"dollar", "USD"},
      {"gram", "g"},    {"liter", "L"},       {"litre", "L"},
      {"hertz", "Hz"},  {"meter", "m"},       {"metre", "m"},
      {"flop", "FLOP"}, {"sample", "sample"}, {"day", "day"}};
  static const std::pair<const char *, const char *> Prefixes[] = {
      {"", ""},       {"kilo", "k"}, {"mega", "M"},  {"giga", "G"},
      {"tera", "T"},  {"peta", "P"}, {"exa", "E"},   {"milli", "m"},
      {"micro", "u"}, {"nano", "n"}, {"kibi", "Ki"}, {"mebi", "Mi"},
      {"gibi", "Gi"}, {"tebi", "Ti"}};
  std::string Lower = Atom.lower();
  llvm::StringRef W(Lower);
  for (auto [Word, Symbol] : Prefixes) {
    if (!W.startswith(Word))
      continue;
    llvm::StringRef Rest = W.drop_front(strlen(Word));
    for (auto [Name, Unit] : Words)
      if (Rest == Name || (Rest.size() == strlen(Name) + 1 &&
                           Rest.startswith(Name) && Rest.endswith("s"))) {
        std::string Candidate = std::string(Symbol) + Unit;
        if (resolveSymbol(Candidate))
          return Candidate;
      }
  }
  return "";
}

std::string closestSpelling(llvm::StringRef Atom) {
  // Common confusions first: `FLOPs` is ambiguous between a count and a
  // rate; its prefix keeps its case where the table has one (`GFlops` ->
  // `GFLOP/s`, `tflops` -> `TFLOP/s`).
  if (Atom.endswith_insensitive("flops")) {
    std::string Count = caseFixed(Atom.drop_back(5).str() + "FLOP");
    return (Count.empty() ? Atom.drop_back(5).str() + "FLOP" : Count) + "/s";
  }
  // Right but for case, or a word for a unit.
  if (std::string Fixed = caseFixed(Atom); !Fixed.empty())
    return Fixed;
  if (std::string Symbol = fromWord(Atom); !Symbol.empty())
    return Symbol;
  // A rate written without its slash: `TBs`, `tokh`.
  for (const char *Time : {"s", "h", "min", "day"}) {
    llvm::StringRef T(Time);
    if (Atom.size() > T.size() && Atom.endswith(T) &&
        resolveSymbol(Atom.drop_back(T.size())))
      return Atom.drop_back(T.size()).str() + "/" + Time;
  }
  // A guess must keep some of what was written: `x` is no typo for `s`.
  std::string Best;
  unsigned BestDistance = std::min<size_t>(3, Atom.size());
  for (const std::string &S : allSpellings()) {
    unsigned D = llvm::StringRef(S).edit_distance(Atom, true, BestDistance);
    if (D < BestDistance) {
      BestDistance = D;
      Best = S;
    }
  }
  return Best;
}

} // namespace

std::optional<Unit> parseUnit(llvm::StringRef Text, UnitParseError &Err) {
  Unit Result;
  size_t Pos = 0;
  char Op = '*';
  while (true) {
    size_t End = Text.find_first_of("*/", Pos);
    if (End == llvm::StringRef::npos)
      End = Text.size();
    llvm::StringRef Atom = Text.slice(Pos, End);
    llvm::StringRef Symbol = Atom;
    int Power = 1;
    size_t Caret = Atom.find('^');
    if (Caret != llvm::StringRef::npos) {
      Symbol = Atom.take_front(Caret);
      llvm::StringRef PowerText = Atom.drop_front(Caret + 1);
      std::string Digits;
      for (char C : PowerText)
        if (C != '_')
          Digits += C;
      if (llvm::StringRef(Digits).getAsInteger(10, Power) || Power == 0 ||
          Power > 9 || Power < -9) {
        Err.Offset = static_cast<unsigned>(Pos + Caret + 1);
        Err.Length = static_cast<unsigned>(PowerText.size());
        Err.Message = "unit power `" + PowerText.str() +
                      "` must be a non-zero integer between -9 and 9";
        return std::nullopt;
      }
    }
    std::optional<Unit> U = resolveSymbol(Symbol);
    if (!U) {
      Err.Offset = static_cast<unsigned>(Pos);
      Err.Length = static_cast<unsigned>(Symbol.size());
      Err.Message = "unknown unit `" + Symbol.str() + "`";
      std::string Close = closestSpelling(Symbol);
      Err.UnknownSymbol = true;
      // A prefix the unit does not take (`mFLOP`, `mtok`), unless the
      // symbol is in lower case and its case-fixed spelling is another unit
      // (`mb` is `MB`, not a prefixed bit).
      auto Prefixed = disallowedPrefix(Symbol);
      std::string Fixed = caseFixed(Symbol);
      if (Prefixed && Symbol.lower() == Symbol.str() && !Fixed.empty() &&
          Prefixed->second != Fixed)
        Prefixed = std::nullopt;
      if (Prefixed) {
        Err.Message = Prefixed->first;
        Close = Prefixed->second;
        Err.UnknownSymbol = false;
      }
      // A month has no fixed length: say so rather than guess one.
      static const llvm::StringRef Months[] = {"month", "months", "mo", "mon",
                                               "mth"};
      if (llvm::is_contained(Months, Symbol.lower())) {
        Err.Message += ": a month has no fixed length; write days (`30 day`) "
                       "or hours (`730 h`, a 365-day year over 12)";
        Err.UnknownSymbol = false;
        Close.clear();
      }
      if (!Close.empty())
        Err.Suggestion = Text.take_front(Pos).str() + Close +
                         Text.drop_front(Pos + Symbol.size()).str();
      return std::nullopt;
    }
    double Scale = std::pow(U->Scale, Power);
    Dimension D = *U->Dim.pow(Power);
    std::optional<Dimension> Combined = Result.Dim.checkedProduct(D, Op != '*');
    if (!Combined) {
      Err.Message = "the unit's dimension has an exponent beyond 100";
      return std::nullopt;
    }
    Result.Dim = *Combined;
    if (Op == '*')
      Result.Scale *= Scale;
    else
      Result.Scale /= Scale;
    if (End == Text.size())
      return Result;
    Op = Text[End];
    Pos = End + 1;
  }
}

std::optional<std::string> suggestUnitFor(llvm::StringRef Written,
                                          const Dimension &Expected) {
  static const char *const Preferred[] = {
      "B/s", "FLOP/s",   "W",       "J",      "Wh",    "s",     "B",     "FLOP",
      "USD", "USD/h",    "USD/kWh", "g/kWh",  "L/kWh", "tok/s", "req/s", "tok",
      "req", "sample/s", "Hz",      "FLOP/B", "g",     "m",     "L"};
  // The written unit's prefix: the longest table prefix that leaves a valid
  // unit, or none.
  llvm::StringRef FirstAtom = Written.take_until(
      [](char C) { return C == '*' || C == '/' || C == '^'; });
  std::string Prefix;
  if (!findExact(FirstAtom)) {
    for (const PrefixDef &P : PrefixTable)
      if (FirstAtom.startswith(P.Symbol) &&
          findExact(FirstAtom.drop_front(strlen(P.Symbol)))) {
        Prefix = P.Symbol;
        break;
      }
  }
  // The prefix carries over only to a unit built on the same base unit
  // (`TB` -> `TB/s`, `TFLOP` -> `TFLOP/s`): a data size written for a token
  // count (`1000 GB`) is not a billion tokens.
  llvm::StringRef Base = FirstAtom.drop_front(Prefix.size());
  auto onBase = [&](llvm::StringRef Canonical) {
    return Canonical.take_until(
               [](char C) { return C == '*' || C == '/' || C == '^'; }) == Base;
  };
  for (const std::string &Try : {Prefix, std::string()}) {
    for (const char *Canonical : Preferred) {
      if (!Try.empty() && !onBase(Canonical))
        continue;
      std::string Candidate = Try + Canonical;
      UnitParseError Ignored;
      std::optional<Unit> U = parseUnit(Candidate, Ignored);
      if (U && U->Dim == Expected)
        return Candidate;
    }
  }
  return std::nullopt;
}

std::vector<UnitTableRow> unitTable() {
  std::vector<UnitTableRow> Rows;
  for (const UnitDef &U : units())
    Rows.push_back(
        {U.Symbol, prefixesName(U.Allowed), U.Scale, U.Dim, U.Meaning});
  return Rows;
}

} // namespace mlsc
