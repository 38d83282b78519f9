// hrelation.h - the h-relations bspbench and bspratio time, each done two ways over the
// same data in the same run: with bspg (bsp_put, then bsp_sync) and with raw MPI.
//
// Every process s sends h 64-bit words. Word i of s lands at position i of its receiver's
// array, so positions never clash and every process also receives exactly h words. Each
// repetition sends fresh values and poisons the receive array first, so check() can tell
// that this repetition's data arrived, complete and nowhere else.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

// Who talks to whom: the destinations of process s are the other processes in the order
// s+1, s+2, ... (mod p); a single process talks to itself.
class Pattern {
 public:
  Pattern(int nprocs, int pid);
  int ndest() const { return nprocs_ > 1 ? nprocs_ - 1 : 1; }
  int dest(int k) const;    // k-th destination of this process, 0 <= k < ndest()
  int source(int k) const;  // the process whose k-th destination is this process
  // What word i of process src carries in repetition rep; exact in a double.
  double value(int rep, int src, long i) const;

 private:
  int nprocs_;
  int pid_;
};

// Largest h either relation accepts (values stay exact doubles).
constexpr long kMaxWords = (1L << 24) - 1;

// Single-word puts: word i goes to destination k = i mod ndest (round robin).
class WordRelation {
 public:
  // Registers the receive array (collective; usable after the next bsp_sync).
  explicit WordRelation(long hmax);
  // Untimed: writes this repetition's words and poisons the receive array.
  void prepare(long h, int rep);
  // One bsp_put per word, then bsp_sync.
  void exchange_bspg(long h);
  // What an MPI programmer writes for the same irregular traffic: pack (index, value)
  // pairs per destination, MPI_Alltoall of the counts, MPI_Alltoallv, unpack.
  void exchange_raw(long h);
  // "" when exactly this repetition's words arrived, otherwise what is wrong.
  std::string check(long h, int rep) const;
  // Deregisters the receive array (collective; takes effect at the next bsp_sync).
  void release();

 private:
  struct IndexedWord {
    std::int64_t index;
    double value;
  };
  Pattern pattern_;
  long hmax_;
  std::vector<int> dests_;
  std::vector<double> send_, recv_;
  std::vector<IndexedWord> packed_, unpacked_;
  std::vector<int> send_counts_, send_offsets_, recv_counts_, recv_offsets_, fill_;
  MPI_Datatype pair_type_;
};

// One put per destination: the words go in ndest blocks of h / ndest words, block k to
// destination k (h is rounded down to a multiple of ndest).
class BlockRelation {
 public:
  explicit BlockRelation(long hmax);
  long words(long h) const { return h / pattern_.ndest() * pattern_.ndest(); }
  void prepare(long h, int rep);
  // One bsp_put per destination, then bsp_sync; unbuffered: bsp_hpput instead of bsp_put.
  void exchange_bspg(long h, bool unbuffered = false);
  // One MPI_Alltoallv straight from the send array into the receive array.
  void exchange_raw(long h);
  std::string check(long h, int rep) const;
  void release();

 private:
  Pattern pattern_;
  long hmax_;
  std::vector<double> send_, recv_;
  std::vector<int> send_counts_, send_offsets_, recv_counts_, recv_offsets_;
};

// Messages (BSMP): every process sends n messages of a 4-byte tag and a 16-byte payload, round
// robin to the other processes, and reads the ones it receives one by one. The tag names the
// sender and the message's number, the payload carries two of the sender's words; what is read
// is kept, in the order read, and checked afterwards.
class MessageRelation {
 public:
  // Sets the tag size (collective; in effect after the next bsp_sync).
  explicit MessageRelation(long nmax);
  void prepare(long n, int rep);
  // bsp_send each, bsp_sync, then bsp_qsize, and bsp_get_tag + bsp_move per message (hpmove:
  // bsp_hpmove, reading tag and payload where they lie).
  void exchange_bspg(long n, bool hpmove = false);
  // What an MPI programmer writes: pack (tag, size, payload) records per destination,
  // MPI_Alltoall of the byte counts, MPI_Alltoallv, then walk the records one by one.
  void exchange_raw(long n);
  std::string check(long n, int rep) const;

 private:
  struct Received {
    std::int32_t tag;
    double payload[2];
  };
  void keep(long j, std::int32_t tag, const char* payload);
  Pattern pattern_;
  long nmax_;
  std::vector<double> send_;
  std::vector<Received> received_;
  long count_ = 0;
  std::vector<char> packed_, unpacked_;
  std::vector<int> send_counts_, send_offsets_, recv_counts_, recv_offsets_, fill_;
};

}  // namespace bench
