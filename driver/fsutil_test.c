// SPDX-License-Identifier: Apache-2.0
// Tests for driver/fsutil.c: a staged commit keeps a destination whose bytes
// are unchanged (inode and mtime), replaces one that differs, and hashes.
#include "driver/fsutil.h"

#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static void test_commit_keeps_same_bytes(void) {
  char dir[] = "/tmp/mlcc-fsutil-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char* path = mlcc_fs_join(dir, "out.bin");
  CHECK_OK(mlcc_fs_write_atomic(path, "abc", 3));
  struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
  struct stat before, after;
  CHECK(stat(path, &before) == 0);

  CHECK_OK(mlcc_fs_write_atomic(path, "abc", 3));  // same bytes: kept
  CHECK(stat(path, &after) == 0);
  CHECK(after.st_ino == before.st_ino && after.st_mtime == 1000000000);

  CHECK_OK(mlcc_fs_write_atomic(path, "abd", 3));  // different bytes: replaced
  CHECK(stat(path, &after) == 0);
  CHECK(after.st_mtime != 1000000000);
  CHECK_OK(mlcc_fs_write_atomic(path, "abdx", 4));  // different size
  uint8_t* data = NULL;
  size_t size = 0;
  CHECK_OK(mlcc_fs_read_file(path, &data, &size));
  CHECK(size == 4 && memcmp(data, "abdx", 4) == 0);
  free(data);

  // No temporaries left beside it: rmdir below fails otherwise.
  CHECK(unlink(path) == 0);
  CHECK(rmdir(dir) == 0);
  free(path);
}

static void test_sha256_buffer(void) {
  char hex[65];
  CHECK_OK(mlcc_fs_sha256_buffer("abc", 3, hex));
  CHECK_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_OK(mlcc_fs_sha256_buffer("", 0, hex));
  CHECK_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

int main(void) {
  RUN(test_commit_keeps_same_bytes);
  RUN(test_sha256_buffer);
  return TEST_EXIT();
}
