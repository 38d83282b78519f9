// Where the copies of each checkpoint shard go (bsprun --copies K, BSPG_COPIES): to K other
// groups (hosts, or subjobs where there are several), one copy in each and never two on one
// host, so that losing any K hosts at once leaves every process's shard or one of its copies;
// on one host, one copy only.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "checkpoint_internal.hpp"

using namespace bspg::checkpoint_internal;

namespace {

// Process q's host (its lowest pid, as plan() names hosts), for hosts of the given sizes.
std::vector<int> hosts_of(const std::vector<int>& processes_per_host) {
  std::vector<int> keys;
  for (int size : processes_per_host) {
    const int leader = static_cast<int>(keys.size());
    keys.insert(keys.end(), static_cast<std::size_t>(size), leader);
  }
  return keys;
}

// Holders where the groups are the hosts (one subjob).
std::vector<int> holders(const std::vector<int>& hosts, int pid, int copies) {
  return copy_holders(hosts, hosts, copies)[static_cast<std::size_t>(pid)];
}

int fewest(const std::vector<std::vector<int>>& all) {
  std::size_t least = all.empty() ? 0 : all[0].size();
  for (const std::vector<int>& h : all) least = std::min(least, h.size());
  return static_cast<int>(least);
}

// Whether losing the hosts in `lost` leaves, for every process, a host that holds its shard (its
// own) or a copy.
bool survives(const std::vector<int>& groups, const std::vector<int>& hosts, int copies,
              const std::set<int>& lost) {
  const std::vector<std::vector<int>> all = copy_holders(groups, hosts, copies);
  for (std::size_t pid = 0; pid < hosts.size(); ++pid) {
    bool kept = !lost.count(hosts[pid]);
    for (int holder : all[pid]) kept = kept || !lost.count(hosts[static_cast<std::size_t>(holder)]);
    if (!kept) return false;
  }
  return true;
}

std::vector<std::set<int>> subsets_of(const std::vector<int>& keys, std::size_t size) {
  std::vector<int> distinct(keys);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::set<int>> all;
  std::vector<bool> pick(distinct.size());
  std::fill(pick.begin(), pick.begin() + static_cast<long>(size), true);
  do {
    std::set<int> chosen;
    for (std::size_t i = 0; i < distinct.size(); ++i)
      if (pick[i]) chosen.insert(distinct[i]);
    all.push_back(chosen);
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return all;
}

void expect_no_host_holds_two(const std::vector<int>& groups, const std::vector<int>& hosts,
                              int copies) {
  const std::vector<std::vector<int>> all = copy_holders(groups, hosts, copies);
  for (std::size_t pid = 0; pid < hosts.size(); ++pid) {
    std::set<int> used{hosts[pid]};
    for (int holder : all[pid])
      EXPECT_TRUE(used.insert(hosts[static_cast<std::size_t>(holder)]).second)
          << "process " << pid << "'s copy at " << holder << " shares a host";
  }
}

}  // namespace

TEST(CopyHolders, OneCopyGoesToTheSameIndexOnTheNextHost) {
  const std::vector<int> hosts = hosts_of({2, 2});  // pids 0 1 | 2 3
  EXPECT_EQ(holders(hosts, 0, 1), std::vector<int>{2});
  EXPECT_EQ(holders(hosts, 1, 1), std::vector<int>{3});
  EXPECT_EQ(holders(hosts, 2, 1), std::vector<int>{0});
  EXPECT_EQ(holders(hosts, 3, 1), std::vector<int>{1});
}

TEST(CopyHolders, TwoCopiesGoToTheNextTwoHosts) {
  const std::vector<int> hosts = hosts_of({1, 1, 1, 1});
  EXPECT_EQ(holders(hosts, 0, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(holders(hosts, 3, 2), (std::vector<int>{0, 1}));
}

TEST(CopyHolders, NoHostHoldsTwoCopiesOfOneShardNorItsOwn) {
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{1, 1, 1, 1}, {2, 2, 2}, {3, 1, 2}, {4, 4, 1, 2, 3}, {1, 5}}) {
    const std::vector<int> hosts = hosts_of(sizes);
    const std::vector<std::vector<int>> all = copy_holders(hosts, hosts, 1000);
    EXPECT_EQ(fewest(all), static_cast<int>(sizes.size()) - 1);
    expect_no_host_holds_two(hosts, hosts, 1000);
  }
}

// Subjobs that share hosts (a host may be named in several): the copies still go to other
// hosts, one each, else there are fewer of them.
TEST(CopyHolders, SubjobsSharingHostsNeverPutTwoCopiesOnOneHost) {
  // Subjob 0 on hosts A and B, subjob 1 on A and B, subjob 2 on C.
  const std::vector<int> groups = {0, 0, 1, 1, 2, 2};
  const std::vector<int> hosts = {0, 1, 0, 1, 4, 4};
  for (int copies = 1; copies <= 3; ++copies) expect_no_host_holds_two(groups, hosts, copies);
  // pid 0 (subjob 0, host A): subjob 1's member at its index is on A too; the next is on B.
  EXPECT_EQ(copy_holders(groups, hosts, 2)[0], (std::vector<int>{3, 4}));
  // A subjob on hosts A and B, another on A alone: pid 0's copy goes to its own subjob's B.
  EXPECT_EQ(copy_holders({0, 0, 2}, {0, 1, 0}, 1)[0], std::vector<int>{1});
  // Two subjobs on one host: the next process keeps the one copy.
  EXPECT_EQ(copy_holders({0, 1}, {0, 0}, 1)[0], std::vector<int>{1});
}

TEST(CopyHolders, AnyKHostsLostLeaveEveryShardWithKCopies) {
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{1, 1, 1, 1}, {2, 2, 2, 2, 2}, {3, 1, 2, 2}, {1, 4, 2}}) {
    const std::vector<int> hosts = hosts_of(sizes);
    for (int copies = 1; copies < static_cast<int>(sizes.size()); ++copies) {
      for (const std::set<int>& lost : subsets_of(hosts, static_cast<std::size_t>(copies)))
        EXPECT_TRUE(survives(hosts, hosts, copies, lost))
            << copies << " copies, " << lost.size() << " lost";
      // One host more than the copies can lose a shard with all its copies.
      bool some_lost = false;
      for (const std::set<int>& lost : subsets_of(hosts, static_cast<std::size_t>(copies) + 1))
        some_lost = some_lost || !survives(hosts, hosts, copies, lost);
      EXPECT_TRUE(some_lost) << copies << " copies";
    }
  }
}

TEST(CopyHolders, OneHostKeepsOneCopyWithTheNextProcess) {
  const std::vector<int> hosts = hosts_of({4});
  EXPECT_EQ(fewest(copy_holders(hosts, hosts, 3)), 1);
  EXPECT_EQ(holders(hosts, 3, 1), std::vector<int>{0});
  EXPECT_TRUE(holders(hosts_of({1}), 0, 1).empty());
}

TEST(CopyHolders, MoreCopiesThanOtherHostsAreCappedAtTheOtherHosts) {
  EXPECT_EQ(fewest(copy_holders(hosts_of({2, 2}), hosts_of({2, 2}), 3)), 1);
  EXPECT_EQ(fewest(copy_holders(hosts_of({1, 1, 1}), hosts_of({1, 1, 1}), 2)), 2);
  EXPECT_EQ(fewest(copy_holders(hosts_of({1, 1, 1}), hosts_of({1, 1, 1}), 5)), 2);
}
