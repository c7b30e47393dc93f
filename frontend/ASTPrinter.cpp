//===- ASTPrinter.cpp - `--emit=ast` --------------------------------------===//
//
// Declarations one per line with their location; expressions as compact
// prefix forms, e.g. `(< chat.ttft.p99 500[ms])`.
//
//===----------------------------------------------------------------------===//

#include "frontend/AST.h"
#include "frontend/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

namespace mlsc {

namespace ast {

std::string Path::str() const { return llvm::join(Parts, "."); }

const char *spelling(UnaryOp Op) {
  switch (Op) {
  case UnaryOp::Negate:
    return "-";
  case UnaryOp::Plus:
    return "+";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

const char *spelling(BinaryOp Op) {
  static const char *const Names[] = {"+", "-",  "*",  "/",  "^",  "<",   "<=",
                                      ">", ">=", "==", "!=", "in", "and", "or"};
  return Names[static_cast<unsigned>(Op)];
}

} // namespace ast

namespace {

void printExpr(const ast::Expr *E, llvm::raw_ostream &OS) {
  using K = ast::Expr::Kind;
  if (!E) {
    OS << "<null>";
    return;
  }
  switch (E->kind()) {
  case K::Number: {
    auto *N = llvm::cast<ast::NumberExpr>(E);
    OS << N->NumberText;
    if (!N->UnitText.empty())
      OS << "[" << N->UnitText << "]";
    return;
  }
  case K::String:
    OS << '"';
    OS.write_escaped(llvm::cast<ast::StringExpr>(E)->Value);
    OS << '"';
    return;
  case K::Date: {
    auto *D = llvm::cast<ast::DateExpr>(E);
    OS << llvm::format("%04d-%02d-%02d", D->Year, D->Month, D->Day);
    return;
  }
  case K::Bool:
    OS << (llvm::cast<ast::BoolExpr>(E)->Value ? "true" : "false");
    return;
  case K::Ref:
    OS << llvm::cast<ast::RefExpr>(E)->Name.str();
    return;
  case K::Call: {
    auto *C = llvm::cast<ast::CallExpr>(E);
    OS << "(call " << C->Callee;
    for (const ast::ExprPtr &A : C->Args) {
      OS << ' ';
      printExpr(A.get(), OS);
    }
    OS << ')';
    return;
  }
  case K::Unary: {
    auto *U = llvm::cast<ast::UnaryExpr>(E);
    OS << '(' << ast::spelling(U->Op) << ' ';
    printExpr(U->Operand.get(), OS);
    OS << ')';
    return;
  }
  case K::Binary: {
    auto *B = llvm::cast<ast::BinaryExpr>(E);
    OS << '(' << ast::spelling(B->Op) << ' ';
    printExpr(B->LHS.get(), OS);
    OS << ' ';
    printExpr(B->RHS.get(), OS);
    OS << ')';
    return;
  }
  case K::List: {
    OS << "(list";
    for (const ast::ExprPtr &I : llvm::cast<ast::ListExpr>(E)->Items) {
      OS << ' ';
      printExpr(I.get(), OS);
    }
    OS << ')';
    return;
  }
  case K::Range: {
    auto *R = llvm::cast<ast::RangeExpr>(E);
    OS << "(range ";
    printExpr(R->Lo.get(), OS);
    OS << ' ';
    printExpr(R->Hi.get(), OS);
    if (R->Step) {
      OS << " step ";
      printExpr(R->Step.get(), OS);
    }
    OS << ')';
    return;
  }
  case K::Error:
    OS << "<error>";
    return;
  }
}

void printProvenance(const ast::Provenance &P, llvm::raw_ostream &OS) {
  if (P.FromSource)
    OS << " from " << P.FromSource->str();
  for (const std::string &N : P.Notes) {
    OS << " note \"";
    OS.write_escaped(N);
    OS << '"';
  }
}

class Printer {
public:
  Printer(llvm::SourceMgr &SM, llvm::raw_ostream &OS) : SM(SM), OS(OS) {}

  std::string at(llvm::SMRange R) {
    if (!R.isValid())
      return "";
    auto LC = SM.getLineAndColumn(R.Start);
    return " @" + std::to_string(LC.first) + ":" + std::to_string(LC.second);
  }

  void items(const ast::ItemList &Items, unsigned Indent) {
    for (const ast::Item &I : Items) {
      OS.indent(Indent);
      switch (I.K) {
      case ast::Item::Kind::Assign:
        OS << "assign " << I.Target.str() << " = ";
        printExpr(I.Value.get(), OS);
        printProvenance(I.Prov, OS);
        OS << at(I.Range) << "\n";
        break;
      case ast::Item::Kind::Block:
        OS << "block " << I.Target.str() << at(I.Range) << "\n";
        items(I.Children, Indent + 2);
        break;
      case ast::Item::Kind::Constraint:
        OS << "constraint ";
        printExpr(I.Value.get(), OS);
        OS << at(I.Range) << "\n";
        break;
      }
    }
  }

  void module(const ast::Module &M) {
    OS << "module \"" << M.FileName << "\"\n";
    for (auto [Which, Index] : M.Order) {
      switch (Which) {
      case 0: {
        const ast::ImportDecl &I = M.Imports[Index];
        OS << "  import " << I.Module.str() << at(I.Range) << "\n";
        break;
      }
      case 1: {
        const ast::AssertDecl &A = M.Asserts[Index];
        OS << "  assert ";
        printExpr(A.Condition.get(), OS);
        if (!A.Message.empty()) {
          OS << " \"";
          OS.write_escaped(A.Message);
          OS << '"';
        }
        OS << at(A.Range) << "\n";
        break;
      }
      case 2: {
        const ast::LetDecl &L = M.Lets[Index];
        OS << "  let " << L.Name << " = ";
        printExpr(L.Value.get(), OS);
        printProvenance(L.Prov, OS);
        OS << at(L.Range) << "\n";
        break;
      }
      default: {
        const ast::EntityDecl &E = M.Entities[Index];
        OS << "  " << E.Kind << " " << E.Name;
        if (E.Base)
          OS << " : " << *E.Base;
        OS << at(E.Range) << "\n";
        items(E.Items, 4);
        break;
      }
      }
    }
  }

private:
  llvm::SourceMgr &SM;
  llvm::raw_ostream &OS;
};

} // namespace

void printAST(const ast::Module &M, llvm::SourceMgr &SM,
              llvm::raw_ostream &OS) {
  Printer(SM, OS).module(M);
}

} // namespace mlsc
