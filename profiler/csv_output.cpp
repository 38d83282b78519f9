// csv_output.cpp - supersteps.csv.
#include "outputs.h"

namespace bspg::profile {

bool CsvOutput::open(const std::string& path, double origin_s) {
  origin_s_ = origin_s;
  if (!file_.open(path)) return false;
  file_.buffer() +=
      "attempt,section,superstep,group,group_first,group_step,kind,pid,host,start_s,"
      "compute_s,sync_s,wait_s,comm_s,bytes_out,bytes_in,messages_out,messages_in,h_bytes\n";
  return true;
}

void CsvOutput::add(const Step& step) {
  std::string& out = file_.buffer();
  for (const Row& row : step.rows) {
    if (row.host != last_host_) {
      last_host_ = row.host;
      last_host_field_ = csv_field(*row.host);
    }
    append_integer(out, std::int64_t{step.attempt});
    out += ',';
    append_integer(out, std::int64_t{step.section});
    out += ',';
    append_integer(out, step.superstep);
    out += ',';
    append_integer(out, step.group);
    out += ',';
    append_integer(out, step.group_first);
    out += ',';
    append_integer(out, step.group_step);
    out += ',';
    out += kind_name(row.kind);
    out += ',';
    append_integer(out, std::int64_t{row.pid});
    out += ',';
    out += last_host_field_;
    out += ',';
    append_seconds(out, row.call_s - origin_s_);
    for (double seconds : {row.compute_s, row.sync_s, row.wait_s, row.comm_s}) {
      out += ',';
      append_seconds(out, seconds);
    }
    for (std::uint64_t n :
         {row.bytes_out, row.bytes_in, row.messages_out, row.messages_in, step.h_bytes}) {
      out += ',';
      append_integer(out, n);
    }
    out += '\n';
  }
  file_.written();
}

}  // namespace bspg::profile
