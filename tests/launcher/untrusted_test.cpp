// untrusted_test.cpp - the forms values from host files and RSL files may take, and how
// untrusted text is shown on a terminal.
#include "untrusted.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace bspg::untrusted;

TEST(Printable, EscapesControlCharactersAndBrokenUtf8Only) {
  EXPECT_EQ(printable("plain text, a\\b 'quoted'"), "plain text, a\\b 'quoted'");
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable(std::string("nul\0!", 5)), "nul\\x00!");
  EXPECT_EQ(printable("\x1b]0;title\x07\x1b[2J\x7f"), "\\x1b]0;title\\x07\\x1b[2J\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\xc2\\x9b2J");  // C1 CSI in UTF-8
  EXPECT_EQ(printable("\x9b"
                      "2J"),
            "\\x9b2J");  // C1 CSI as a raw byte
  EXPECT_EQ(printable("\xc0\xaf \xed\xa0\x80 \xe2\x82"), "\\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x82");
}

TEST(Printable, ExcerptCutsLongText) {
  EXPECT_EQ(excerpt(std::string(100, 'a'), 10), "aaaaaaaaaa...");
  EXPECT_EQ(excerpt("short\n", 10), "short\\n");
}

TEST(ControlCharacters, NamesTheFirstAndWhere) {
  EXPECT_EQ(control_character_problem("fine"), "");
  EXPECT_EQ(control_character_problem("caf\xc3\xa9"), "");
  EXPECT_EQ(control_character_problem("ab\ncd"), "it contains a newline (\\n) at character 3");
  EXPECT_EQ(control_character_problem(std::string("a\0", 2)),
            "it contains a NUL byte (\\x00) at character 2");
  EXPECT_EQ(control_character_problem("\x1b[2J"),
            "it contains an escape character (\\x1b) at character 1");
  EXPECT_EQ(control_character_problem("x\xc2\x9b"),
            "it contains a control character (U+009b) at character 2");
  EXPECT_EQ(control_character_problem("x\xc2\""),
            "");  // a stray lead byte, not a control character
}

TEST(HostNames, AcceptTheFormsHostsAreNamedBy) {
  for (const char* name : {"node1", "a1.lab-a.example.org", "emu_4", "10.1.2.3", "x", "_gateway"})
    EXPECT_EQ(host_name_problem(name), "") << name;
}

TEST(HostNames, RefuseEverythingElseWithTheReason) {
  EXPECT_EQ(host_name_problem(""), "it is empty");
  EXPECT_EQ(host_name_problem("-oProxyCommand=x"),
            "it starts with '-' (ssh and mpirun would read it as an option)");
  EXPECT_EQ(host_name_problem("emu1:2"),
            "':' is not allowed (only letters, digits, '-', '_' and dots are)");
  EXPECT_EQ(host_name_problem("a b"),
            "' ' is not allowed (only letters, digits, '-', '_' and dots are)");
  EXPECT_EQ(host_name_problem("a*"),
            "'*' is not allowed (only letters, digits, '-', '_' and dots are)");
  EXPECT_EQ(host_name_problem("a\nb"), "it contains a newline (\\n) at character 2");
  EXPECT_EQ(host_name_problem("a..b"),
            "it has an empty part (a dot at either end, or two dots in a row)");
  EXPECT_EQ(host_name_problem("node."),
            "it has an empty part (a dot at either end, or two dots in a row)");
  EXPECT_EQ(host_name_problem("a.-b"), "the part '-b' starts with '-'");
  EXPECT_EQ(host_name_problem(std::string(64, 'a')),
            "a part between dots is longer than 63 characters");
  EXPECT_EQ(host_name_problem("1.2.3.999"),
            "it is not an IPv4 address (four numbers from 0 to 255 separated by dots)");
  EXPECT_EQ(host_name_problem("127.1"),
            "it is not an IPv4 address (four numbers from 0 to 255 separated by dots)");
}

TEST(Addresses, AcceptIpv6AndStripItsBrackets) {
  EXPECT_EQ(address_problem("::1"), "");
  EXPECT_EQ(address_problem("[2001:db8::7]"), "");
  EXPECT_EQ(address_without_brackets("[2001:db8::7]"), "2001:db8::7");
  EXPECT_EQ(address_problem("gw.example.org"), "");
  EXPECT_EQ(address_problem("fe80::1%eth0"),
            "IPv6 addresses with a zone (%interface) are not supported");
  EXPECT_EQ(address_problem("[node1]"),
            "it is not an IPv6 address, nor a host name or IPv4 address");
  EXPECT_EQ(address_problem("1:2:3"), "it is not an IPv6 address, nor a host name or IPv4 address");
  EXPECT_EQ(address_problem("-J evil"),
            "it starts with '-' (ssh and mpirun would read it as an option)");
}

TEST(UserNames, AcceptPosixNamesOnly) {
  EXPECT_EQ(user_name_problem("alice"), "");
  EXPECT_EQ(user_name_problem("svc.build_2-x$"), "");
  EXPECT_EQ(user_name_problem("-l"),
            "it starts with '-' (ssh and mpirun would read it as an option)");
  EXPECT_EQ(user_name_problem("a@b"),
            "'@' is not allowed (only letters, digits, '.', '_' and '-' are)");
  EXPECT_EQ(user_name_problem("a$b"),
            "'$' is not allowed (only letters, digits, '.', '_' and '-' are)");
  EXPECT_EQ(user_name_problem(std::string(65, 'u')), "it is longer than 64 characters");
}

TEST(Paths, MustBeAbsoluteAndPlain) {
  EXPECT_EQ(absolute_path_problem("/home/a/my key"), "");
  EXPECT_EQ(absolute_path_problem("key"), "it is not an absolute path");
  EXPECT_EQ(absolute_path_problem("/k\n"), "it contains a newline (\\n) at character 3");
}

TEST(EnvironmentNames, AreVariableNames) {
  EXPECT_TRUE(is_environment_name("BSPG_SUBJOB"));
  EXPECT_TRUE(is_environment_name("_x1"));
  EXPECT_FALSE(is_environment_name(""));
  EXPECT_FALSE(is_environment_name("1X"));
  EXPECT_FALSE(is_environment_name("A=B"));
  EXPECT_FALSE(is_environment_name("A B"));
}

TEST(ReadRegularFile, ReadsSmallFilesAndRefusesLargerOnes) {
  char path[] = "/tmp/bspg-untrusted-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "0123456789", 10), 10);
  close(fd);
  std::string text, problem;
  EXPECT_TRUE(read_regular_file(path, 10, text, problem)) << problem;
  EXPECT_EQ(text, "0123456789");
  EXPECT_FALSE(read_regular_file(path, 9, text, problem));
  EXPECT_EQ(problem, "it is 10 bytes, more than the 9 bytes allowed");
  EXPECT_FALSE(read_regular_file("/dev/null", 9, text, problem));
  EXPECT_EQ(problem, "it is a device, not a regular file");
  EXPECT_FALSE(read_regular_file("/nonexistent/x", 9, text, problem));
  EXPECT_EQ(problem, "No such file or directory");
  unlink(path);
}
