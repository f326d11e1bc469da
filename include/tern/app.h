/* Application descriptions (seed 002 V-A.3): tasks, priorities, routing
 * tables, multicast groups and init data, validated before anything runs. */
#ifndef TERN_APP_H
#define TERN_APP_H

#include "tern/msg.h"
#include "tern/types.h"
#include "tern_rom.h"

/* Where a description lives. A description fixed when the image is built
 * and validated then (TERN_APP_FLASH, set by cmake's tern_app_build_check)
 * stays in flash on the AVR: it is declared TERN_DESC, its names are
 * TERN_DESC_STR("name"), and the kernel reads it in place (LPM through
 * 16-bit __flash pointers: one cycle more a byte than RAM); a plain `const`
 * table or string would be copied into RAM at reset. Its init data is still
 * a RAM pointer. Everywhere else (descriptions made at run time, other
 * CPUs) TERN_DESC is nothing and TERN_DESC_STR the literal. avr-gcc does
 * not diagnose a flash pointer passed as a plain one (a varargs %s, a
 * string literal where TERN_DESC_STR belongs): -Waddr-space-convert finds
 * the rest. */
#if TERN_APP_FLASH
#define TERN_DESC TERN_FLASH
#define TERN_DESC_STR(literal) ((const TERN_DESC char[]){literal})
#else
#define TERN_DESC
#define TERN_DESC_STR(literal) (literal)
#endif

/* A handler runs to completion for one message. Its return status is
 * counted (handler errors) but never stops the kernel. */
typedef tern_status (*tern_handler)(void *state, tern_msg *m);

typedef enum {
    TERN_ROUTE_NONE = 0, /* output port not wired: posting to it is TERN_ENOROUTE */
    TERN_ROUTE_TASK,     /* to (task, port) */
    TERN_ROUTE_GROUP,    /* to every member of multicast group `group` */
} tern_route_kind;

typedef struct {
    uint8_t kind; /* tern_route_kind */
    uint8_t group;
    tern_task_id task;
    tern_port port;
} tern_route;

#define TERN_TO_TASK(t, p) {TERN_ROUTE_TASK, 0, (t), (p)}
#define TERN_TO_GROUP(g) {TERN_ROUTE_GROUP, (g), TERN_NO_TASK, 0}

typedef struct {
    tern_task_id task;
    tern_port port;
} tern_endpoint;

typedef struct {
    uint8_t id;
    uint8_t n_members;
    const TERN_DESC tern_endpoint *members;
} tern_group_desc;

/* Task flags. */
#define TERN_TASK_THREAD 0x01  /* hybrid: needs a private stack to block */
#define TERN_TASK_MOVABLE 0x02 /* may migrate to another module (seed 002's COMOS_TASK_MOVABLE) */
/* Hardware the task drives: in an app of several modules it must start on a
 * module whose tern_app_desc.module_hw has it, and it never moves (seed 002:
 * a task bound to its processor's devices is not movable). */
#define TERN_TASK_NEEDS_RADIO TERN_HW_RADIO
#define TERN_TASK_NEEDS_ADC TERN_HW_ADC
#define TERN_TASK_NEEDS_HW (TERN_TASK_NEEDS_RADIO | TERN_TASK_NEEDS_ADC)

typedef struct {
    const TERN_DESC char *name; /* TERN_DESC_STR("...") */
    tern_task_id id;
    uint8_t priority; /* 0 .. TERN_PRIO_LEVELS-1, higher runs first */
    tern_handler handler;
    void *state;
    uint8_t n_in_ports;  /* application input ports, TERN_PORT_APP(0..n-1) */
    uint8_t n_out_ports; /* entries in routes[] */
    const TERN_DESC tern_route *routes;
    const void *init_data; /* delivered with the INIT message */
    uint16_t init_len;
    uint8_t flags;
    uint16_t stack_size; /* private stack for thread tasks; 0 otherwise */
    /* The processor it starts on (tern/remote.h): TERN_MODULE(bus address)
     * in an app of n_modules modules, 0 (this one) otherwise. */
    uint8_t module;
} tern_task_desc;

typedef struct {
    const TERN_DESC char *name; /* TERN_DESC_STR("...") */
    const TERN_DESC tern_task_desc *tasks;
    uint8_t n_tasks;
    const TERN_DESC tern_group_desc *groups;
    uint8_t n_groups;
    /* Processors (modules) the app spans, at bus addresses 0..n_modules-1;
     * 0 for a single-processor app. Every processor of the node runs the
     * same description and instantiates only its own tasks (tern/remote.h). */
    uint8_t n_modules;
    /* The hardware of each module (TERN_TASK_NEEDS_* bits), n_modules
     * entries by bus address; NULL: no module has any. A processor refuses
     * to start (TERN_ENOHW) when its own entry claims hardware its board
     * lacks (tern_board_info.hw). */
    const TERN_DESC uint8_t *module_hw;
} tern_app_desc;

/* Why a description was refused: the task (index into tasks[], or -1 when
 * the fault is not in a task), the field, and a readable sentence. */
typedef struct {
    tern_status code;
    int task_index;
    char field[32]; /* the description field at fault, e.g. "routes[].port" */
    char text[112];
} tern_app_error;

/* Check a description without changing any kernel state. */
tern_status tern_app_validate(const TERN_DESC tern_app_desc *app, tern_app_error *err);

/* Validate, instantiate every task, then deliver INIT to each (two-stage
 * creation: messages that reach a task before its INIT are held). */
tern_status tern_app_start(const TERN_DESC tern_app_desc *app, tern_app_error *err);

/* The usual main(): tern_app_start, then the kernel's loop (tern_run);
 * never returns. A refused description is printed ("tern: <text>
 * (<status>)") and the program exits with status 1. */
__attribute__((noreturn)) void tern_app_run(const TERN_DESC tern_app_desc *app);

/* TERN_APP_CHECKED(desc), at file scope beside the description an image
 * starts: in a build with TERN_APP_BUILD_CHECK (cmake:
 * tern_app_build_check), the names for the build-time check
 * (tools/appcheck), which runs tern_app_validate on the build machine with
 * the image's definitions and fails the build with the same named error;
 * the image then carries no validator. Nothing in the image. */
#ifdef TERN_APPCHECK
#define TERN_APP_CHECKED(desc) const TERN_DESC tern_app_desc *const tern_appcheck_desc = &(desc)
#else
#define TERN_APP_CHECKED(desc) extern const TERN_DESC tern_app_desc *const tern_appcheck_desc
#endif

/* Deliver FINAL to a task; when it has run, the task's heap blocks are
 * reported as leaks and reclaimed, its timers cancelled, and it is removed.
 * TERN_EFULL when the message pool has no room for FINAL: the task goes on
 * as it was and finalize may be retried. */
tern_status tern_task_finalize(tern_task_id id);

#endif
