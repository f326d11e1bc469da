/* Fuzz target: tern-sim's config reader (tools/simavr/tern-sim.c,
 * read_config and parse_line), the text that `./tern sim` writes and that
 * a user may write by hand.
 *
 * tern-sim.c is included as it is, with its main() left out
 * (TERN_SIM_FUZZ) and three names redirected for the reader only:
 *  - exit: config_error ends the process on the first bad line; here it
 *    returns to the harness (longjmp) with the exit code;
 *  - stderr: the message goes to a buffer the harness checks;
 *  - calloc/realloc/fopen: tracked, so what a refused config had
 *    allocated or opened is released before the next input (tern-sim
 *    leaves that to the exit).
 *
 * Invariants: no crash or undefined behaviour on any input; a refused
 * config exits with EXIT_USAGE and a message "tern-sim: PATH:LINE: ..."
 * naming a line within the file (0 for what concerns the whole file); an
 * accepted one has a duration, at least one node, unique node names, and
 * every pin and bus reference in range. */
#define _GNU_SOURCE /* memfd_create, fmemopen */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

static jmp_buf config_exit;
static int exit_code;
static char message[8192];
static FILE *fuzz_stderr;

static _Noreturn void fuzz_exit(int code)
{
    exit_code = code;
    longjmp(config_exit, 1);
}

/* Every block the reader allocates, to free after each input. */
static void **tracked;
static size_t n_tracked, cap_tracked;

static void track(void *p)
{
    if (n_tracked == cap_tracked) {
        cap_tracked = cap_tracked ? 2 * cap_tracked : 64;
        tracked = realloc(tracked, cap_tracked * sizeof *tracked);
        if (!tracked)
            abort();
    }
    tracked[n_tracked++] = p;
}

static void *fuzz_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p)
        track(p);
    return p;
}

static void *fuzz_realloc(void *old, size_t size)
{
    void *p = realloc(old, size);
    if (!p)
        return NULL;
    for (size_t i = 0; old && i < n_tracked; i++)
        if (tracked[i] == old) {
            tracked[i] = p;
            return p;
        }
    track(p);
    return p;
}

static FILE *open_config;

static FILE *fuzz_fopen(const char *path, const char *mode)
{
    open_config = fopen(path, mode);
    return open_config;
}

static int fuzz_fclose(FILE *f)
{
    if (f == open_config)
        open_config = NULL;
    return fclose(f);
}

#define TERN_SIM_FUZZ
#define exit(code) fuzz_exit(code)
#undef stderr
#define stderr fuzz_stderr
#define calloc(n, size) fuzz_calloc(n, size)
#define realloc(p, size) fuzz_realloc(p, size)
#define fopen(path, mode) fuzz_fopen(path, mode)
#define fclose(f) fuzz_fclose(f)
#include "tern-sim.c"
#undef fopen
#undef fclose
#undef exit
#undef stderr
#undef calloc
#undef realloc

static int config_fd = -1;
static char config_file[64];

static void check_accepted(const struct config *c, unsigned lines)
{
    (void)lines;
    CHECK(c->duration > 0, "accepted without a duration");
    CHECK(c->n_nodes > 0, "accepted without a node");
    CHECK(c->threads >= 1 && c->threads <= 256, "threads %u", c->threads);
    for (size_t i = 0; i < c->n_nodes; i++) {
        CHECK(memchr(c->nodes[i]->name, '\0', sizeof c->nodes[i]->name) != NULL,
              "node name not terminated");
        CHECK(c->node_bus[i].bus < (int)c->n_buses, "node %zu on bus %d of %zu", i, c->node_bus[i].bus,
              c->n_buses);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(c->nodes[i]->name, c->nodes[j]->name) != 0, "node '%s' twice",
                  c->nodes[i]->name);
    }
    for (size_t i = 0; i < c->n_probes; i++)
        CHECK(c->probes[i].node < c->n_nodes, "pin on node %u of %zu", c->probes[i].node,
              c->n_nodes);
    for (size_t i = 0; i < c->medium.n_links; i++)
        CHECK(c->medium.links[i].from < c->n_nodes && c->medium.links[i].to < c->n_nodes,
              "link %zu out of range", i);
}

static void check_refused(unsigned lines)
{
    CHECK(exit_code == EXIT_USAGE, "exit code %d", exit_code);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "tern-sim: %s:", config_file);
    CHECK(strncmp(message, prefix, strlen(prefix)) == 0, "message '%s'", message);
    unsigned line = (unsigned)strtoul(message + strlen(prefix), NULL, 10);
    CHECK(line <= lines, "error on line %u of a %u-line file: %s", line, lines, message);
    size_t len = strlen(message);
    CHECK(len > strlen(prefix) + 3 && message[len - 1] == '\n', "message '%s'", message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (config_fd < 0) {
        config_fd = memfd_create("tern-sim.cfg", 0);
        CHECK(config_fd >= 0, "memfd_create");
        snprintf(config_file, sizeof config_file, "/proc/self/fd/%d", config_fd);
        fuzz_stderr = fmemopen(message, sizeof message - 1, "w");
        CHECK(fuzz_stderr != NULL, "fmemopen");
        setvbuf(fuzz_stderr, NULL, _IONBF, 0);
    }
    CHECK(ftruncate(config_fd, 0) == 0 && pwrite(config_fd, data, size, 0) == (ssize_t)size,
          "writing the config");
    unsigned lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    lines += size && data[size - 1] != '\n';

    memset(message, 0, sizeof message);
    rewind(fuzz_stderr);
    config_line = 0;
    exit_code = -1;
    static struct config c;
    memset(&c, 0, sizeof c);
    if (setjmp(config_exit) == 0) {
        read_config(&c, config_file);
        check_accepted(&c, lines);
    } else {
        check_refused(lines);
    }
    if (open_config)
        fuzz_fclose(open_config);
    for (size_t i = 0; i < c.n_buses; i++)
        free(c.buses[i]);
    for (size_t i = 0; i < n_tracked; i++)
        free(tracked[i]);
    n_tracked = 0;
    return 0;
}
