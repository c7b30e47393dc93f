// Mls.g4 - grammar of .mls scenario files.
//
// The parse tree built from this grammar never leaves frontend/: the visitor in
// frontend/Parser.cpp turns it into our AST. Code is generated at build time.
//
// Two choices shape the grammar (see docs/language.md, "Lexical structure"):
//  * A quantity literal is ONE token: a number, optional spaces or tabs (never a
//    newline), then a unit expression written without spaces (`3.35 TB/s`,
//    `USD/kWh`, `kg*m^2/s^2`). `80 GB / 2` still divides, because the unit
//    expression cannot contain spaces. A unit word must end at a word boundary
//    and must not be a keyword, so `0.55 from src` reads as `0.55` `from` `src`;
//    UnitLexer in frontend/Parser.cpp enforces that once QUANTITY has matched
//    (a predicate here would keep ANTLR from caching its lexer DFA).
//  * Operator chains are loops, not recursion, so the parse depth is bounded by
//    bracket nesting, which the front end limits before parsing.
grammar Mls;

// ---------------------------------------------------------------- parser rules

module : topDecl* EOF ;

topDecl
  : importDecl
  | assertDecl
  | letDecl
  | entityDecl
  ;

importDecl : IMPORT modulePath ';'? ;
modulePath : name ('.' name)* ;

assertDecl : ASSERT expr (',' STRING)? ';'? ;

letDecl : LET name '=' valueExpr ';'? ;

entityDecl : kind=IDENT entityName=name (':' base=name)? block ;

block : '{' blockItem* '}' ;

blockItem
  : path '=' valueExpr ';'?      # assignItem
  | path block ';'?              # nestedItem
  | expr ';'?                    # constraintItem
  ;

valueExpr : expr provenance* ;

provenance
  : FROM name                    # fromProvenance
  | NOTE STRING                  # noteProvenance
  ;

path : name ('.' name)* ;

// Soft keywords usable as names.
name : IDENT | NOTE | STEP ;

expr : andExpr (OR andExpr)* ;

andExpr : notExpr (AND notExpr)* ;

notExpr : NOT* cmpExpr ;

cmpExpr : rangeExpr (cmpOp rangeExpr)? ;

cmpOp : '<' | '<=' | '>' | '>=' | '==' | '!=' | IN ;

rangeExpr : addExpr ('..' addExpr (STEP addExpr)?)? ;

addExpr : mulExpr (addOp mulExpr)* ;
addOp : '+' | '-' ;

mulExpr : unaryExpr (mulOp unaryExpr)* ;
mulOp : '*' | '/' ;

unaryExpr : signOp* powExpr ;
signOp : '+' | '-' ;

// `a ^ b ^ c` is right-associative; the visitor folds the loop from the right.
powExpr : primary (powTail)* ;
powTail : '^' signOp* primary ;

primary
  : QUANTITY                                  # quantityLit
  | NUMBER                                    # numberLit
  | STRING                                    # stringLit
  | DATE                                      # dateLit
  | (TRUE | FALSE)                            # boolLit
  | '(' expr ')'                              # parenExpr
  | '[' (expr (',' expr)* ','?)? ']'          # listExpr
  | name '(' (expr (',' expr)* ','?)? ')'     # callExpr
  | path                                      # refExpr
  ;

// ----------------------------------------------------------------- lexer rules

IMPORT : 'import' ;
ASSERT : 'assert' ;
FROM   : 'from' ;
NOTE   : 'note' ;
IN     : 'in' ;
TRUE   : 'true' ;
FALSE  : 'false' ;
LET    : 'let' ;
STEP   : 'step' ;
AND    : 'and' ;
OR     : 'or' ;
NOT    : 'not' ;

DATE : DIGIT DIGIT DIGIT DIGIT '-' DIGIT DIGIT '-' DIGIT DIGIT ;

QUANTITY : NUMBER_BODY [ \t]* UNIT_EXPR ;

NUMBER : NUMBER_BODY ;

IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;

STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;

// An opening quote with no closing quote on the same line; the front end
// reports it and hands the parser a STRING so no follow-on errors appear.
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '\\'? ;

DOTDOT : '..' ;
DOT    : '.' ;
LE     : '<=' ;
GE     : '>=' ;
EQ     : '==' ;
NE     : '!=' ;
LT     : '<' ;
GT     : '>' ;
ASSIGN : '=' ;
PLUS   : '+' ;
MINUS  : '-' ;
STAR   : '*' ;
SLASH  : '/' ;
CARET  : '^' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACK : '[' ;
RBRACK : ']' ;
LBRACE : '{' ;
RBRACE : '}' ;
COMMA  : ',' ;
COLON  : ':' ;
SEMI   : ';' ;

COMMENT : '#' ~[\r\n]* -> channel(HIDDEN) ;
WS      : [ \t\r\n\f]+ -> channel(HIDDEN) ;

// Anything else: one character, reported by the front end as a lexical error.
ERROR_CHAR : . ;

fragment DIGIT       : [0-9] ;
fragment DIGITS      : DIGIT ('_'? DIGIT)* ;
fragment NUMBER_BODY : DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? ;
fragment UNIT_EXPR   : UNIT_ATOM ([*/] UNIT_ATOM)* ;
fragment UNIT_ATOM   : ([a-zA-Z] [a-zA-Z0-9_]* | '%') ('^' '-'? DIGITS)? ;
