// traffic_output.cpp - traffic.csv and traffic.gp: who sent whom how much over the profile.
#include <algorithm>

#include "outputs.h"

namespace bspg::profile {

namespace {

constexpr int kCellLabelsUpTo = 8;  // up to this many processes, every cell shows its bytes

}  // namespace

void TrafficOutput::add(const Step& step) {
  for (const Row& row : step.rows) processes_ = std::max(processes_, row.pid + 1);
  for (const Step::Flow& flow : step.flows) {
    Total& total = totals_[{flow.from, flow.to}];
    total.bytes += flow.bytes;
    total.messages += flow.messages;
    processes_ = std::max({processes_, flow.from + 1, flow.to + 1});
  }
}

bool TrafficOutput::write(const std::string& dir) {
  OutputFile csv;
  if (!csv.open(dir + "/traffic.csv")) {
    error_ = csv.error();
    return false;
  }
  std::string& out = csv.buffer();
  out += "from,to,bytes,messages\n";
  std::uint64_t largest = 0;
  for (const auto& [pair, total] : totals_) {
    append_integer(out, static_cast<std::uint64_t>(pair.first));
    out += ',';
    append_integer(out, static_cast<std::uint64_t>(pair.second));
    out += ',';
    append_integer(out, total.bytes);
    out += ',';
    append_integer(out, total.messages);
    out += '\n';
    csv.written();
    largest = std::max(largest, total.bytes);
  }
  if (!csv.close()) {
    error_ = csv.error();
    return false;
  }
  if (totals_.empty()) return true;  // nothing to draw

  OutputFile script;
  if (!script.open(dir + "/traffic.gp")) {
    error_ = script.error();
    return false;
  }
  const std::string p = std::to_string(processes_);
  const std::string last = std::to_string(processes_ - 1);
  std::string& gp = script.buffer();
  gp +=
      "# bspprof: the bytes each process sent each other over the whole profile (traffic.csv),\n"
      "# a cell per pair, from (row) -> to (column), the colour on a logarithmic scale.\n"
      "# Redraw with: cd " +
      printable_text(dir.data(), dir.size()) + " && gnuplot traffic.gp\n";
  gp += "set terminal pngcairo size 800,720 font 'Sans,10' noenhanced\n";
  gp += "set output 'traffic.png'\n";
  gp += "set datafile separator ','\n";
  gp += "set title \"bspprof: bytes sent, who to whom (p = " + p + ", " +
        std::to_string(totals_.size()) + (totals_.size() == 1 ? " pair" : " pairs") +
        " that exchanged data)\"\n";
  gp += "set xlabel 'to (pid)'\nset ylabel 'from (pid)'\n";
  gp += "set xrange [-0.5:" + last + ".5]\nset yrange [" + last + ".5:-0.5]\n";
  gp += "set size ratio -1\nset tics out nomirror\n";
  if (processes_ <= 32) gp += "set xtics 1\nset ytics 1\n";
  gp += "set logscale cb\nset cblabel 'bytes'\nset format cb '%.0s%c'\n";
  gp += "set cbrange [1:";
  append_integer(gp, std::max<std::uint64_t>(largest, 2));
  gp += "]\nset palette defined (0 '#fff5eb', 1 '#fdd0a2', 2 '#fd8d3c', 3 '#d94801')\n";
  gp += "unset key\n";
  gp +=
      "plot 'traffic.csv' skip 1 using 2:1:(0.5):(0.5):($3 > 0 ? $3 : 1) with boxxyerror "
      "fs solid 1.0 noborder fc palette";
  if (processes_ <= kCellLabelsUpTo)
    gp +=
        ", \\\n     '' skip 1 using 2:1:($3 < 1000 ? sprintf('%d B', int($3)) : "
        "gprintf('%.1s %cB', $3)) with labels "
        "font 'Sans,9' tc rgb '#202020'";
  gp += "\n";
  if (!script.close()) {
    error_ = script.error();
    return false;
  }
  return true;
}

}  // namespace bspg::profile
