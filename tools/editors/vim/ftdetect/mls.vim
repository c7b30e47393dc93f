" .mls scenario files (mlsc).
autocmd BufNewFile,BufRead *.mls setfiletype mls
