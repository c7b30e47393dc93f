" Vim syntax file
" Language:    MLS scenario files (.mls), read by mlsc
" Maintainer:  the mlsc project (tools/editors/vim; docs/editors.md)
"
" The same categories as the TextMate grammar in tools/editors/vscode: a
" quantity is a number and a unit written without spaces whose last word is
" no keyword (`0.55 from src` is a number, then `from`); `1e3` is a number;
" `note` and `step` are keywords only where the parser reads them so.

if exists("b:current_syntax")
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

syn case match

" Where several matches start at one place the one defined last wins, and a
" keyword wins over them all: the general rules come first.
syn match mlsOperator /\.\.\|[<>!=]=\|[<>=+\-*\/^]/
syn match mlsFunction /\<\h\w*\ze\s*(/
syn match mlsBlock /\<\h\w*\ze\%(\s*\.\s*\h\w*\)*\s*{/
syn match mlsField /\<\h\w*\ze\%(\s*\.\s*\h\w*\)*\s*=\%(=\)\@!/

" `kind name : base {` starts a declaration.
syn match mlsEntityKind /\<\h\w*\ze\s\+\h\w*\s*\%(:\s*\h\w*\s*\)\=\%({\|$\)/ nextgroup=mlsEntityName skipwhite
syn match mlsEntityName /\h\w*/ contained nextgroup=mlsEntityColon skipwhite
syn match mlsEntityColon /:/ contained nextgroup=mlsEntityBase skipwhite
syn match mlsEntityBase /\h\w*/ contained

syn keyword mlsImport import nextgroup=mlsModule skipwhite
syn match mlsModule /\h\w*\%(\.\h\w*\)*/ contained
syn keyword mlsLet let nextgroup=mlsConstant skipwhite
syn match mlsConstant /\h\w*/ contained
syn keyword mlsKeyword assert from
syn keyword mlsWordOperator and or not in
syn keyword mlsBoolean true false
" Soft keywords: `note = "..."` and `x.step` are names.
syn match mlsKeyword /\<note\ze\s*"/
syn match mlsKeyword /\.\@1<!\<step\>\%(\s*\%(=\%(=\)\@!\|{\|\.\%(\.\)\@!\)\)\@!/

" Numbers, then dates over them, then quantities: the number part is
" followed by its unit (mlsUnit, through nextgroup). With spaces before it,
" the unit's last word must not be a keyword; written on, as in `2in`, a
" one-word unit may be one, and it must not read as an exponent (`1e3`).
syn match mlsNumber /\<\d\%(_\=\d\)*\%(\.\d\%(_\=\d\)*\)\=\%([eE][+-]\=\d\%(_\=\d\)*\)\=/
syn match mlsDate /\<\d\{4}-\d\d-\d\d/
syn match mlsQuantity /\<\d\%(_\=\d\)*\%(\.\d\%(_\=\d\)*\)\=\%([eE][+-]\=\d\%(_\=\d\)*\)\=\ze\%([ \t]\+\%(\%(\a\w*\|%\)\%(\^-\=\d\%(_\=\d\)*\)\=[*\/]\)*\%(\%(\a\w*\|%\)\^-\=\d\%(_\=\d\)*\|\%(\<\%(import\|assert\|from\|note\|in\|true\|false\|let\|step\|and\|or\|not\)\>\)\@!\a\w*\|%\)\|\%([eE][+-]\=\d\)\@!\%(\%(\a\w*\|%\)\%(\^-\=\d\%(_\=\d\)*\)\=[*\/]\)*\%(\a\w*\|%\)\%(\^-\=\d\%(_\=\d\)*\)\=\)\w\@!/ nextgroup=mlsUnit skipwhite
syn match mlsUnit /\%(\%(\a\w*\|%\)\%(\^-\=\d\%(_\=\d\)*\)\=[*\/]\)*\%(\%(\a\w*\|%\)\^-\=\d\%(_\=\d\)*\|\%(\<\%(import\|assert\|from\|note\|in\|true\|false\|let\|step\|and\|or\|not\)\>\)\@!\a\w*\|%\)\w\@!\|\%(\a\w*\|%\)\%(\^-\=\d\%(_\=\d\)*\)\=\w\@!/ contained

syn region mlsString start=/"/ skip=/\\./ end=/"\|$/ contains=mlsEscapeError,mlsEscape
syn match mlsEscapeError /\\./ contained
syn match mlsEscape /\\["\\nt]/ contained

syn keyword mlsTodo TODO FIXME XXX NOTE contained
syn match mlsComment /#.*$/ contains=mlsTodo,@Spell

hi def link mlsComment      Comment
hi def link mlsTodo         Todo
hi def link mlsString       String
hi def link mlsEscape       SpecialChar
hi def link mlsEscapeError  Error
hi def link mlsNumber       Number
hi def link mlsQuantity     Number
hi def link mlsUnit         Type
hi def link mlsDate         Constant
hi def link mlsBoolean      Boolean
hi def link mlsKeyword      Keyword
hi def link mlsLet          Keyword
hi def link mlsImport       Include
hi def link mlsWordOperator Keyword
hi def link mlsOperator     Operator
hi def link mlsModule       Identifier
hi def link mlsConstant     Identifier
hi def link mlsEntityKind   Structure
hi def link mlsEntityName   Typedef
hi def link mlsEntityBase   Type
hi def link mlsField        Identifier
hi def link mlsBlock        Label
hi def link mlsFunction     Function

let b:current_syntax = "mls"
let &cpo = s:cpo_save
unlet s:cpo_save
