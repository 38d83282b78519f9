/* mpi_where.c - each rank prints where it runs and its subjob; rank 0 echoes its
 * arguments and reads stdin when given "--stdin" (one line: "--stdin-line"); the job exits
 * with the status given by "--exit N" (returned by every rank after MPI_Finalize). "--sleep S"
 * sleeps before the final barrier; "--die R" makes rank R kill itself (SIGKILL) there instead;
 * "--env NAME" makes every rank print "rank R env NAME=VALUE" (or "rank R env NAME is not set"). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const char* subjob = getenv("BSPG_SUBJOB");
  const char* nsubjobs = getenv("BSPG_NSUBJOBS");
  const char* sizes = getenv("BSPG_SUBJOB_SIZES");
  printf("rank %d of %d on %s subjob %s of %s sizes %s\n", rank, size, host, subjob ? subjob : "-",
         nsubjobs ? nsubjobs : "-", sizes ? sizes : "-");
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
      status = atoi(argv[++i]);
    else if (strcmp(argv[i], "--stdin") == 0 && rank == 0) {
      char line[256];
      while (fgets(line, sizeof line, stdin)) printf("stdin: %s", line);
    } else if (strcmp(argv[i], "--stdin-line") == 0 && rank == 0) {
      char line[256];
      if (fgets(line, sizeof line, stdin)) printf("stdin: %s", line);
    } else if (strcmp(argv[i], "--sleep") == 0 && i + 1 < argc) {
      fflush(stdout);
      sleep((unsigned)atoi(argv[++i]));
    } else if (strcmp(argv[i], "--die") == 0 && i + 1 < argc) {
      if (atoi(argv[++i]) == rank) {
        printf("rank %d dies\n", rank);
        fflush(stdout);
        raise(SIGKILL);
      }
    } else if (strcmp(argv[i], "--env") == 0 && i + 1 < argc) {
      const char* name = argv[++i];
      const char* value = getenv(name);
      if (value)
        printf("rank %d env %s=%s\n", rank, name, value);
      else
        printf("rank %d env %s is not set\n", rank, name);
    } else if (rank == 0) {
      printf("arg %d: %s\n", i, argv[i]);
    }
  }
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
