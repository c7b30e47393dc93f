# Counts each class's requests in a --requests-csv file of
# eval/simulate-lengths.mls and those whose lengths fall outside the
# class's histograms.
NR == 1 { next }
$1 == "classes" && $3 == "summaries" {
  n["summaries"]++
  if ($5 < 3000 || $5 > 5000 || $7 != 50) bad["summaries"]++
}
$1 == "classes" && $3 == "interactive" {
  n["interactive"]++
  if ($7 != 100 && $7 != 300) bad["interactive"]++
}
END {
  printf "summaries %d outside %d\n", n["summaries"], bad["summaries"]
  printf "interactive %d outside %d\n", n["interactive"], bad["interactive"]
}
