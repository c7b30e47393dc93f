//===- IRPrinter.cpp - `--emit=ir` and `--print-ir-after` -----------------===//
//
// One block per entity, one line per field:
//   path : type = value   <- origin
// where origin is `literal @file:line:col`, `derived (expr)`, or `inherited
// from BASE`, followed by `from SOURCE` when a source is cited.
//
//===----------------------------------------------------------------------===//

#include "ir/IR.h"

#include "llvm/Support/Path.h"

namespace mlsc::ir {

namespace {

class IRPrinter {
public:
  IRPrinter(const Program &P, llvm::SourceMgr &SM, llvm::raw_ostream &OS)
      : P(P), SM(SM), OS(OS) {}

  std::string at(llvm::SMRange R) {
    if (!R.isValid())
      return "?";
    unsigned Buf = SM.FindBufferContainingLoc(R.Start);
    auto LC = SM.getLineAndColumn(R.Start, Buf);
    llvm::StringRef Name = SM.getMemoryBuffer(Buf)->getBufferIdentifier();
    return llvm::sys::path::filename(Name).str() + ":" +
           std::to_string(LC.first) + ":" + std::to_string(LC.second);
  }

  bool inMain(llvm::SMRange R) {
    return R.isValid() && SM.FindBufferContainingLoc(R.Start) == P.MainBufferId;
  }

  /// `literal 3.35 TB/s @f.mls:4:7`, `derived (a * b) @...` or `@...`.
  void origin(const Expr *Value, llvm::SMRange R) {
    if (Value && Value->Kind == ExprKind::Number)
      OS << "literal " << Value->Spelling << " ";
    else if (Value && isComputed(*Value))
      OS << "derived " << exprToString(*Value) << " ";
    OS << "@" << at(R);
  }

  static bool isComputed(const Expr &E) {
    switch (E.Kind) {
    case ExprKind::String:
    case ExprKind::Date:
    case ExprKind::Bool:
    case ExprKind::EnumSymbol:
    case ExprKind::EntityRef:
    case ExprKind::Error:
      return false;
    default:
      return true;
    }
  }

  void field(const Field &F) {
    OS << "    " << F.Path << " : ";
    if (F.Value)
      OS << F.Value->Ty.str();
    else
      OS << "conditions";
    if (F.Folded)
      OS << " = " << valueToString(*F.Folded);
    else if (F.Value)
      OS << " = " << exprToString(*F.Value);
    OS << "   <- ";
    if (F.InheritedFrom)
      OS << "inherited from " << F.InheritedFrom->Name << ", ";
    origin(F.Value.get(), F.Range);
    if (F.Source)
      OS << " from " << F.Source->Name;
    for (const std::string &N : F.Notes)
      OS << " note \"" << N << "\"";
    OS << "\n";
    for (const ExprPtr &C : F.Conditions)
      OS << "      " << exprToString(*C) << " : " << C->Ty.str() << "\n";
  }

  void run(bool IncludeImported) {
    for (const auto &L : P.Lets) {
      if (!IncludeImported && !inMain(L->NameRange))
        continue;
      OS << "let " << L->Name << " : "
         << (L->Value ? L->Value->Ty.str() : "<error>");
      if (L->Folded)
        OS << " = " << valueToString(*L->Folded);
      else if (L->Value)
        OS << " = " << exprToString(*L->Value);
      OS << "   <- ";
      origin(L->Value.get(), L->NameRange);
      if (L->Source)
        OS << " from " << L->Source->Name;
      OS << "\n";
    }
    for (const auto &E : P.Entities) {
      if (!IncludeImported && !inMain(E->NameRange))
        continue;
      OS << E->Kind << " " << E->Name;
      if (E->Base)
        OS << " : " << E->Base->Name;
      OS << " @" << at(E->NameRange) << "\n";
      for (const Field &F : E->Fields)
        field(F);
    }
    for (const Assert &A : P.Asserts) {
      OS << "assert " << exprToString(*A.Condition) << " : "
         << A.Condition->Ty.str() << " @" << at(A.Range);
      if (!A.Message.empty())
        OS << " \"" << A.Message << "\"";
      OS << "\n";
    }
  }

private:
  const Program &P;
  llvm::SourceMgr &SM;
  llvm::raw_ostream &OS;
};

} // namespace

void printProgram(const Program &P, llvm::SourceMgr &SM, llvm::raw_ostream &OS,
                  bool IncludeImported) {
  IRPrinter(P, SM, OS).run(IncludeImported);
}

} // namespace mlsc::ir
