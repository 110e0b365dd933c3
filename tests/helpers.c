/*
 * helpers.c -- see helpers.h.
 */
#include "helpers.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void make_temp_dir(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/rooflab-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        abort();
    }
}

void rm_tree(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void slurp_fd(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    for (int c; (c = fgetc(f)) != EOF;)
        if (n + 1 < cap)
            buf[n++] = (char)c;
    buf[n] = '\0';
}

int run_capture(const char *cmd, char *out, size_t out_cap, char *err, size_t err_cap)
{
    char errpath[] = "/tmp/rooflab-stderr-XXXXXX";
    int fd = mkstemp(errpath);
    if (fd < 0)
        return -1;
    close(fd);
    char full[4096];
    snprintf(full, sizeof full, "%s 2>'%s' </dev/null", cmd, errpath);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    slurp_fd(p, out, out_cap);
    int status = pclose(p);
    FILE *e = fopen(errpath, "r");
    if (e) {
        slurp_fd(e, err, err_cap);
        fclose(e);
    }
    unlink(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    size_t got = fread(buf, 1, (size_t)size, f);
    buf[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

bool file_exists(const char *path) { return access(path, F_OK) == 0; }

int count_entries(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, part))
            n++;
    closedir(d);
    return n;
}
