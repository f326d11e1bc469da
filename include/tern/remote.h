/* Remote tasks: one application over the processors (modules) of one node
 * (seed 002 V-A.3 and V-B.2; DESIGN.md "Communication"; docs/multiprocessor.md).
 *
 * Every processor runs the same application description. A task's
 * `module` field says where it starts (TERN_MODULE(bus address)); each
 * processor instantiates its own tasks and keeps a remote TCB (priority,
 * module, input ports, flags) for every other. A message to a remote task
 * leaves through the *bus manager* (kernel/remote.c): sent at once when the
 * bus is free, otherwise queued by destination priority (FIFO among equals)
 * and sent when the bus frees, which an alarm, the bus receive interrupt
 * and the idle loop notice. The receiving processor delivers it under its
 * own execution model exactly like a message from an interrupt handler:
 * the same port checks, priority rules and errors. A multicast leaves
 * once, as a bus broadcast; every processor, the sender included, delivers
 * it to its own members (the *multicast manager*), the only ones it knows.
 *
 * The bus itself is a tern_bus, an abstract transport (drivers/procbus's
 * procbus_remote.c is tern-sim's; tests use a fake one); the task migrator
 * uses the remote TCB table and tern_remote_send_to() below.
 *
 * Nothing is lost silently: refused sends return a tern_status and are
 * counted by reason in tern_remote_counters; a received frame that cannot
 * be delivered for want of room (message pool or heap) stays on the bus
 * (its flow control holds the sender) and is retried. A processor without
 * power (one that died) NACKs: its messages are dropped by name, peer_down,
 * and nothing else waits for it (tern_remote_nack). */
#ifndef TERN_REMOTE_H
#define TERN_REMOTE_H

#include "tern/app.h"
#include "tern/types.h"

/* tern_task_desc.module: 0 (the default) is "this processor", which
 * single-processor apps leave alone; TERN_MODULE(a) is the processor at bus
 * address a. An app of several modules sets n_modules and gives every task
 * a module. */
#define TERN_MODULE_THIS 0
#define TERN_MODULE(addr) ((uint8_t)((addr) + 1))
#define TERN_MODULE_ADDRESS(m) ((uint8_t)((m) - 1))
#define TERN_BUS_ALL 0xFF   /* tern_bus.send: every processor but this one */
#define TERN_REMOTE_NONE 0xFF /* tern_remote_tcb.module of a task that is not remote */

/* Bytes before the payload in every bus frame: kind, source task,
 * destination task or group, port, and a CRC-16 of those four and the
 * payload (tern_remote_frame_crc, little-endian): a frame damaged on the
 * bus is dropped by name (bad_crc), never delivered with other bytes than
 * were sent. In the header, not after the payload, so that a frame leaves
 * as two parts (tern_bus.send). */
#define TERN_REMOTE_HEADER 6
#define TERN_REMOTE_CRC_AT 4
/* The largest frame a tern_bus may carry. */
#define TERN_REMOTE_FRAME_MAX 64

typedef enum {
    TERN_BUS_SENT = 0, /* the frame will be delivered */
    TERN_BUS_BUSY,     /* the previous frame is still under way: try again later */
    TERN_BUS_FAILED,   /* refused for good (bad destination or length) */
} tern_bus_result;

/* A processor bus as the bus manager sees it. */
typedef struct {
    /* Hand one frame (1..frame_max bytes) to the bus for bus address `dst`
     * or TERN_BUS_ALL: the header's bytes, then the body's (the payload,
     * where it lies: nobody copies the frame onto a stack first); copies
     * them. Called with interrupts disabled. */
    tern_bus_result (*send)(uint8_t dst, const uint8_t *head, uint8_t head_len, const void *body,
                            uint8_t body_len);
    /* Optional: offer a received frame that tern_remote_receive() refused
     * (no room) again, with interrupts disabled. */
    void (*poll)(void);
    uint8_t address;     /* this processor's bus address */
    uint8_t count;       /* processors on the bus */
    uint8_t frame_max;   /* largest frame, header included, <= TERN_REMOTE_FRAME_MAX */
    tern_time retry_ticks; /* how soon to look again while the bus is busy */
} tern_bus;

/* Attach the bus before tern_app_start(): from then on messages to remote
 * tasks and multicasts go through it. TERN_EINVAL for a bus without send,
 * an address outside count, more than TERN_REMOTE_PROCESSORS_MAX
 * processors or frames too short for a header; TERN_ESTATE
 * once an app runs. The bus is kept by pointer. */
tern_status tern_remote_attach(const tern_bus *bus);

/* The bus driver hands each received frame here (any context, interrupts
 * disabled or in its receive interrupt). False: no room to deliver it now;
 * the driver keeps the frame and offers it again through poll(). A frame
 * from a processor that was down brings it up again. */
bool tern_remote_receive(uint8_t src, const uint8_t *frame, uint8_t len);

/* The bus driver reports a frame to bus address `address` that the bus
 * did not deliver because that processor has no power (halted, off for
 * good) -- not one that sleeps: a powered-down processor still takes
 * frames, which wake it. `ours`: the frame was one this bus manager sent
 * (it is counted, peer_down; time sync's or power's are not). From then
 * on the processor is down: what waits for it in the bus queue is dropped
 * (peer_down), new sends to its tasks are refused with TERN_ETIMEOUT
 * (peer_down), and the queue no longer waits behind it; messages for a
 * frozen task still wait (it may move). One NACK suffices: the bus never
 * refuses a powered processor (flow control makes it wait instead). Up
 * again when a frame from it arrives. Called from the driver's interrupt
 * or poll, never from inside tern_bus.send. */
void tern_remote_nack(uint8_t address, bool ours);

/* True while bus address `address` is down (above). */
bool tern_remote_peer_down(uint8_t address);

/* The remote TCB (seed 002: task id, priority, module; the id is the
 * table index). module is TERN_REMOTE_NONE for a task that is local or
 * unknown here. */
typedef struct {
    uint8_t priority;
    uint8_t module;     /* bus address of the processor it runs on */
    uint8_t n_in_ports; /* application input ports, for the sender's port check */
    uint8_t flags;      /* the description's flags (TERN_TASK_MOVABLE) */
} tern_remote_tcb;

/* The remote TCB of task id, NULL when it is not remote. */
const tern_remote_tcb *tern_remote_tcb_of(tern_task_id id);

/* The bus address of the processor task id runs on: the remote TCB's
 * module, this processor's address for a local task, TERN_REMOTE_NONE for
 * an unknown one (the migrator's `locate`; with one migrator task per
 * module, also which processor a migrator message came from: m->src). */
uint8_t tern_remote_module_of(tern_task_id id);

/* The task migrator: task id now runs on bus address `module`
 * (TERN_REMOTE_NONE: it now runs here, and the caller has instantiated
 * it). Messages already queued for the bus follow it. TERN_ENOTASK for
 * an id outside the description, TERN_EINVAL for a module outside the bus. */
tern_status tern_remote_set_module(tern_task_id id, uint8_t module);

/* Send to (dst, port) on bus address `module`, whatever the remote TCB
 * says (the migrator's messages between processors, forwarding). The
 * receiver checks the port. `prio` orders it in the bus queue. Same
 * errors as a send to a remote task. Any context. */
tern_status tern_remote_send_to(uint8_t module, tern_task_id src, tern_task_id dst,
                                tern_port port, const void *payload, uint16_t len,
                                uint8_t prio);

/* The migrator's FREEZE on this processor's bus side (tern_mig_ops.freeze):
 * from now on unicasts to task id (through its TCB or tern_remote_send_to)
 * wait in the bus queue, in order, and nothing to it leaves; others pass
 * them. tern_remote_unfreeze sends them on, to the module the TCB names
 * then (tern_remote_set_module first, for a task that moved). Freezing a
 * task that runs here is the scheduler's business, not this. TERN_ENOTASK
 * for an id beyond the table or without a bus. */
tern_status tern_remote_freeze(tern_task_id id);
tern_status tern_remote_unfreeze(tern_task_id id);

/* The migrator's KILLED (tern_mig_ops.killed): task id is gone for good.
 * Unicasts waiting for it in the bus queue are dropped (counted: task_killed),
 * its TCB no longer names a module (later sends: TERN_ENOTASK, counted
 * no_task by the kernel) and the freeze ends. Errors as freeze. */
tern_status tern_remote_forget(tern_task_id id);

/* Messages in the bus queue that wait for the bus: not held for a frozen
 * task, not for a task that has moved here. The migrator waits for these
 * before queueing its next STATE fragment. */
uint16_t tern_remote_sendable(void);

/* This processor's bus address (TERN_REMOTE_NONE without a bus). */
uint8_t tern_remote_address(void);

typedef enum {
    TERN_REMOTE_DROP_TOO_LONG = 0, /* payload longer than a frame holds (TERN_ERANGE) */
    TERN_REMOTE_DROP_QUEUE_FULL,   /* bus queue at TERN_REMOTE_QUEUE_MAX or pool empty (TERN_EFULL) */
    TERN_REMOTE_DROP_NO_MEMORY,    /* no heap block for a queued copy (TERN_ENOMEM) */
    TERN_REMOTE_DROP_BUS_FAILED,   /* the bus refused the frame for good */
    TERN_REMOTE_DROP_INVALID,      /* a length without a payload, a module outside the bus (TERN_EINVAL) */
    TERN_REMOTE_DROP_BAD_FRAME,    /* received: too short, unknown kind or group */
    TERN_REMOTE_DROP_NO_TASK,      /* received: the destination is not here */
    TERN_REMOTE_DROP_NO_PORT,      /* received: the destination has no such port, or one of
                                    * INIT, FINAL, SERIALIZE, DESERIALIZE, which only the
                                    * local kernel and migrator send */
    TERN_REMOTE_DROP_REFUSED,      /* received: refused otherwise (finalizing task) */
    TERN_REMOTE_DROP_KILLED,       /* queued for a task a failed migration killed */
    TERN_REMOTE_DROP_BAD_CRC,      /* received: its CRC-16 does not match (damaged on the bus) */
    TERN_REMOTE_DROP_PEER_DOWN,    /* for a processor without power: NACKed on the bus, or refused
                                    * (TERN_ETIMEOUT) or taken from the queue once it had NACKed */
    TERN_REMOTE_DROP_REASONS
} tern_remote_drop_reason;

typedef struct {
    uint32_t tx_frames;   /* unicast frames handed to the bus */
    uint32_t tx_mcast;    /* multicast frames handed to the bus (one per multicast) */
    uint32_t tx_queued;   /* sends that waited in the bus queue */
    uint32_t tx_busy;     /* attempts that found the bus busy */
    uint32_t rx_frames;   /* unicast frames delivered here */
    uint32_t rx_mcast;    /* multicast frames received */
    uint32_t rx_deferred; /* received frames left on the bus for want of room, retried */
    uint32_t dropped[TERN_REMOTE_DROP_REASONS];
    uint16_t queue_depth; /* messages in the bus queue now */
    uint16_t max_queue_depth;
} tern_remote_counters;

const tern_remote_counters *tern_remote_stats(void);

/* The CRC-16/CCITT-FALSE a frame of len >= TERN_REMOTE_HEADER bytes
 * carries at TERN_REMOTE_CRC_AT: of its first four bytes and its payload
 * (for tests and harnesses that build frames). */
uint16_t tern_remote_frame_crc(const uint8_t *frame, uint8_t len);
/* A short stable name such as "no_port" (kept short: strings live in RAM on the AVR). */
const char *tern_remote_drop_name(tern_remote_drop_reason r);

#endif
