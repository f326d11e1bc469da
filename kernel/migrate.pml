/* kernel/migrate.pml: a Promela model of the task migrator of
 * kernel/migrate.c (seed 002, V-D), checked with Spin by `make test-spin`
 * (docs/migration.md says what is proven and under which assumptions).
 *
 * Three processors: 0 is the source (the task starts there), 1 the
 * destination, 2 asks for the migration. One sender on each processor
 * keeps sending K sequence-numbered messages to the task while the
 * migration runs; the task checks every sequence number. SERIALIZE may
 * fail (the source gives up), the destination may fail DESERIALIZE, the
 * source may then fail to resume (the task is killed). The task's timer may expire at any moment, in flight included.
 * Links are FIFO per ordered pair of processors and nothing more (a
 * processor bus is stronger: one total order).
 *
 * Every step of a processor's migrator is one atomic block, as one call of
 * the C engine is; the comment at each names the C function (and the
 * kernel op of tern_mig_ops) it models. Each block ends with inv():
 *   - the task is attached on at most one processor, at every step;
 *   - the task handles each sender's messages in order, without gap or
 *     repetition (assert in the dispatch), and its timer fires at most once;
 *   - no message reaches a processor that does not hold the task;
 * and when nothing can move any more (timeout), Final checks termination:
 * every migrator idle, nobody frozen, the task on exactly one processor
 * with every message handled and the timer fired once, or killed with
 * every message handled or counted as dropped. `./pan -a` also finds
 * cycles (there are none: the protocol cannot run forever) and invalid end
 * states (a processor stuck waiting).
 *
 * With -DCRASH one processor may die at any moment (between two atomic
 * steps): it takes no more steps, what is sent to it is lost, what it
 * sent is still delivered (a frame on the bus). The others give up by
 * tern_mig_poll()'s rules when nothing else can happen (Spin's timeout:
 * a deadline longer than any exchange among the living): a source still
 * freezing resumes, one that sent STATE kills the task; the others, once
 * the source is dead, drop what they hold for the task. Final then checks
 * that the living agree: nobody frozen or waiting, every living routing
 * entry the same, naming a living processor that holds the task, a dead
 * one (it died with the task), or nowhere (killed).
 *
 * Seeded bugs, each of which the checker must catch (make test-spin runs
 * them and fails if one passes):
 *   -DBUG_UNFREEZE_FIRST  mig_on_result releases the held senders before
 *                         updating the routing entry;
 *   -DBUG_NO_WAIT         mig_send_state sends STATE without waiting for
 *                         every FROZEN reply;
 *   -DBUG_NO_HELD         the messages queued at the source do not travel
 *                         with the task (detach drops them);
 *   -DBUG_SENT_RESUMES    (with -DSPURIOUS) a source whose STATE got no
 *                         answer resumes the task instead of killing it.
 *
 * -DSPURIOUS lets the source give up at any moment, as if
 * its timeout were shorter than the exchange: the living may then disagree
 * (the destination attached the task, the others heard KILLED: reported
 * LOST while it runs, docs/reliability.md), but the task is still never on
 * two processors; that is all this configuration checks. */

#define N 3
#ifdef SPURIOUS
#define SPURIOUS_ON 1
#else
#define SPURIOUS_ON 0
#endif
#ifndef K
#define K 2 /* messages per sender */
#endif
#define SRC 0
#define DST 1
#define REQ 2
#define NOWHERE 255
#define TIMER 7 /* the "sender" of a TIMEOUT message */

/* roles of tern_mig_slot */
#define IDLE 0
#define SRC_FREEZING 1
#define SRC_SENT 2
#define FROZEN_WAIT 3

mtype = { DATA, REQUEST, FREEZE, FROZEN, HELD, STATE, RESULT, RESUMED, KILLED };

chan link[N * N] = [8] of { mtype, byte, byte }; /* link[from*N+to], FIFO */
#define L(a, b) link[(a) * N + (b)]
chan tq[N] = [8] of { byte, byte };   /* the task's queue (sender, seq) */
chan held[N] = [K] of { byte, byte };  /* messages held at their senders by freeze */
chan stage = [8] of { byte, byte };   /* the destination reading an image's held messages */

bool has_task[N];    /* the task is attached (runnable) on this processor */
bool alive[N];       /* -DCRASH: a dead processor takes no step */
bool frozen[N];      /* ops.freeze: senders here hold their messages to the task */
byte route[N];       /* routing entry: where this processor sends the task's messages */
byte role[N];
byte replies;        /* the source's count of FROZEN replies (itself included) */
bool serialize_pending;
byte serialized;     /* 1: SERIALIZE returned the state, 2: it failed */
byte tlast[3];       /* the task's own state: last seq handled per sender (it travels) */
byte dropped;        /* messages dropped because the task was killed (counted) */
bool killed;
bool timer_armed = 1, timer_due, timer_lost;
byte fired;
bool migration_over; /* Final has checked the end */

inline inv()
{
    assert(has_task[0] + has_task[1] + has_task[2] <= 1)
}

/* The kernel's post on processor p (what ops.freeze and ops.route act on). */
inline post(pp, ss, ii)
{
    if
    :: frozen[pp] -> held[pp]!ss, ii
    :: else ->
        if
        :: route[pp] == NOWHERE -> dropped++
        :: route[pp] == pp -> assert(has_task[pp]); tq[pp]!ss, ii
        :: else -> L(pp, route[pp])!DATA, ss, ii
        fi
    fi
}

/* ops.unfreeze: release the held messages in order through the routing entry. */
inline unfreeze(p)
{
    frozen[p] = 0;
    do
    :: held[p]?s, i -> post(p, s, i)
    :: empty(held[p]) -> break
    od
}

/* ops.killed on processor p: drop (and count) what waits for the task. */
inline kill_local(p)
{
    do
    :: held[p]?s, i -> dropped++
    :: empty(held[p]) -> break
    od;
    frozen[p] = 0;
    route[p] = NOWHERE;
    role[p] = IDLE
}

/* A pending expiry of the task's timer reaches the task being attached. */
inline timer_arrives(p)
{
    if
    :: timer_due -> tq[p]!TIMER, 0; timer_due = 0
    :: else -> skip
    fi
}

/* mig_send_state(): once every processor has replied and SERIALIZE has
 * returned, ops.detach and STATE (its held messages first, as the image
 * carries them). The source keeps the image (tq[SRC]) until the outcome. */
inline send_state()
{
    if
#ifdef BUG_NO_WAIT
    :: role[SRC] == SRC_FREEZING && serialized == 1 ->
#else
    :: role[SRC] == SRC_FREEZING && serialized == 1 && replies == N ->
#endif
        has_task[SRC] = 0;
        n = len(tq[SRC]);
        do
        :: n > 0 -> tq[SRC]?s, i;
#ifdef BUG_NO_HELD
            skip;
#else
            tq[SRC]!s, i; L(SRC, DST)!HELD, s, i;
#endif
            n--
        :: else -> break
        od;
        L(SRC, DST)!STATE, 0, 0;
        role[SRC] = SRC_SENT
    :: role[SRC] == SRC_FREEZING && serialized == 2 && replies == N ->
        /* mig_abort(): SERIALIZE failed (or a processor declined: no
         * slot); the task never left: everybody unfreezes */
        L(SRC, DST)!RESUMED, 0, 0; L(SRC, REQ)!RESUMED, 0, 0;
        unfreeze(SRC);
        role[SRC] = IDLE
    :: else -> skip
    fi
}

/* mig_on_result() with a success: routing entry first, then release. */
inline result_ok(p)
{
#ifdef BUG_UNFREEZE_FIRST
    unfreeze(p);
    route[p] = DST;
#else
    route[p] = DST;
    unfreeze(p);
#endif
    if
    :: p == SRC -> /* the source's image is no longer needed */
        do
        :: tq[SRC]?s, i -> skip
        :: empty(tq[SRC]) -> break
        od
    :: else -> skip
    fi;
    role[p] = IDLE
}

/* mig_resume(): the source re-attaches the task from its image, or kills it. */
inline resume()
{
    if
    :: has_task[SRC] = 1; /* ops.attach on the source */
        timer_arrives(SRC);
        L(SRC, DST)!RESUMED, 0, 0; L(SRC, REQ)!RESUMED, 0, 0;
        unfreeze(SRC);
        role[SRC] = IDLE
    :: /* ops.attach failed: KILLED (the image's messages count as dropped) */
        do
        :: tq[SRC]?s, i ->
            if
            :: s == TIMER -> timer_lost = 1
            :: else -> dropped++
            fi
        :: empty(tq[SRC]) -> break
        od;
        if
        :: timer_due -> timer_due = 0; timer_lost = 1
        :: else -> skip
        fi;
        killed = 1;
        L(SRC, DST)!KILLED, 0, 0; L(SRC, REQ)!KILLED, 0, 0;
        kill_local(SRC)
    fi
}

/* tern_mig_poll() on processor p: a step given up (TERN_ETIMEOUT). */
inline give_up(p)
{
    if
    :: role[p] == SRC_FREEZING -> /* mig_abort(): the task never left */
        L(SRC, DST)!RESUMED, 0, 0; L(SRC, REQ)!RESUMED, 0, 0;
        unfreeze(SRC);
        role[SRC] = IDLE
    :: role[p] == SRC_SENT ->
#ifdef BUG_SENT_RESUMES
        has_task[SRC] = 1;
        L(SRC, DST)!RESUMED, 0, 0; L(SRC, REQ)!RESUMED, 0, 0;
        unfreeze(SRC);
        role[SRC] = IDLE
#else
        /* mig_kill(): it left, the image's messages count as dropped */
        do
        :: tq[SRC]?s, i -> dropped++
        :: empty(tq[SRC]) -> break
        od;
        killed = 1;
        L(SRC, DST)!KILLED, 0, 0; L(SRC, REQ)!KILLED, 0, 0;
        kill_local(SRC)
#endif
    :: role[p] == FROZEN_WAIT -> /* the source died: a partial STATE goes too */
        do
        :: p == DST && nempty(stage) -> stage?s, i
        :: else -> break
        od;
        killed = 1;
        kill_local(p)
    fi;
    inv()
}

/* tern_mig_receive() on processor p of a message k from q. */
inline receive(p, q)
{
    if
    :: k == DATA -> /* the kernel's delivery of an application message */
        assert(has_task[p]); tq[p]!a, b
    :: k == REQUEST -> /* mig_on_request() -> mig_start(): freeze, SERIALIZE, FREEZE multicast */
        assert(p == SRC && has_task[p] && role[p] == IDLE);
        role[p] = SRC_FREEZING;
        frozen[p] = 1;
        serialize_pending = 1;
        replies = 1;
        L(p, DST)!FREEZE, 0, 0; L(p, REQ)!FREEZE, 0, 0
    :: k == FREEZE -> /* mig_on_freeze(): ops.freeze, FROZEN reply */
        role[p] = FROZEN_WAIT;
        frozen[p] = 1;
        L(p, SRC)!FROZEN, p, 0
    :: k == FROZEN -> /* mig_on_frozen() */
        replies++;
        send_state()
    :: k == HELD -> /* mig_on_state() -> decode(): an image's held message */
        stage!a, b
    :: k == STATE -> /* mig_on_state(): ops.attach (DESERIALIZE), RESULT multicast */
        assert(p == DST && role[p] == FROZEN_WAIT);
        if
        :: has_task[p] = 1;
            do
            :: stage?s, i -> tq[p]!s, i
            :: empty(stage) -> break
            od;
            timer_arrives(p);
            L(p, SRC)!RESULT, 1, 0; L(p, REQ)!RESULT, 1, 0;
            result_ok(p)
#ifndef NO_FAIL
        :: /* DESERIALIZE failed: nothing of the task stays here */
            do
            :: stage?s, i -> skip
            :: empty(stage) -> break
            od;
            L(p, SRC)!RESULT, 0, 0; L(p, REQ)!RESULT, 0, 0
#endif
        fi
    :: k == RESULT -> /* mig_on_result() */
        if
        :: role[p] == IDLE -> skip /* stale: RESUMED or KILLED overtook it (stats.stale) */
        :: role[p] != IDLE && a == 1 -> result_ok(p)
        :: role[p] != IDLE && a == 0 && p == SRC -> resume()
        :: role[p] != IDLE && a == 0 && p != SRC -> skip /* wait for RESUMED or KILLED */
        fi
    :: (k == RESUMED || k == KILLED) && role[p] == IDLE && SPURIOUS_ON -> skip /* stale: it had attached */
    :: k == RESUMED && !(role[p] == IDLE && SPURIOUS_ON) -> /* tern_mig_receive(): ops.unfreeze, routes unchanged */
        assert(role[p] == FROZEN_WAIT);
        unfreeze(p);
        role[p] = IDLE
    :: k == KILLED && !(role[p] == IDLE && SPURIOUS_ON) -> /* tern_mig_receive(): ops.killed */
        assert(role[p] == FROZEN_WAIT);
        kill_local(p)
    fi;
    inv()
}

proctype Proc(byte p)
{
    mtype k;
    byte a, b, s, i, n;
end:
    do
    :: atomic { alive[p] && nempty(L(0, p)) -> L(0, p)?k, a, b; receive(p, 0) }
    :: atomic { alive[p] && nempty(L(1, p)) -> L(1, p)?k, a, b; receive(p, 1) }
    :: atomic { alive[p] && nempty(L(2, p)) -> L(2, p)?k, a, b; receive(p, 2) }
    :: atomic { /* tern_mig_poll(): a peer that will never answer. The
                 * others wait longer than a living source takes to decide. */
        timeout && alive[p] && role[p] != IDLE && (p == SRC || !alive[SRC]) -> give_up(p) }
#ifdef SPURIOUS
    :: atomic { alive[p] && p == SRC && role[p] != IDLE -> give_up(p) }
#endif
    :: atomic { /* the task handles the head of its queue */
        alive[p] && has_task[p] && !frozen[p] && nempty(tq[p]) -> tq[p]?s, i;
        if
        :: s == TIMER -> fired++; assert(fired == 1)
        :: else -> assert(i == tlast[s] + 1); tlast[s] = i
        fi;
        inv() }
    :: atomic { /* tern_mig_serialized(): the SERIALIZE handler returned */
        alive[p] && p == SRC && serialize_pending -> serialize_pending = 0;
        if
        :: serialized = 1
#ifndef NO_FAIL
        :: serialized = 2
#endif
        fi;
        send_state();
        inv() }
    od
}

/* Sender s on processor s posts 1..K to the task. */
proctype Sender(byte s)
{
    byte i = 1;
    do
    :: atomic { i <= K && alive[s] -> post(s, s, i); i++; inv() }
    :: i > K || !alive[s] -> break
    od
}

/* tern_mig_request() on processor REQ: forwarded to the source. */
proctype Requester()
{
    atomic { L(REQ, route[REQ])!REQUEST, 0, 0 }
}

/* The task timer expires once, wherever the task is, or in flight (then
 * decode() counts it and ops.attach fires it on arrival). */
proctype Timer()
{
    atomic {
        timer_armed -> timer_armed = 0;
        if
        :: has_task[0] -> tq[0]!TIMER, 0
        :: has_task[1] -> tq[1]!TIMER, 0
        :: has_task[2] -> tq[2]!TIMER, 0
        :: else ->
            if
            :: killed -> timer_lost = 1
            :: else -> timer_due = 1
            fi
        fi
    }
}

#if defined(CRASH) || defined(SPURIOUS)
/* One processor dies at any moment, or none does. */
proctype Crash()
{
    atomic {
        if
        :: alive[0] = 0
        :: alive[1] = 0
        :: alive[2] = 0
        :: skip
        fi
    }
}

/* Nothing can move any more and nobody living is waiting for a peer. */
proctype Final()
{
    byte p, r = NOWHERE;
    atomic {
        timeout && (!alive[0] || role[0] == IDLE) && (!alive[1] || role[1] == IDLE) &&
            (!alive[2] || role[2] == IDLE) ->
#ifndef SPURIOUS
        for (p : 0 .. N - 1) {
            if
            :: alive[p] ->
                assert(!frozen[p] && empty(held[p]));
                if
                :: r == NOWHERE -> r = route[p]
                :: else -> skip
                fi;
                assert(route[p] == r)
            :: else -> skip
            fi
        }
        if
        :: r == NOWHERE -> assert(!(alive[0] && has_task[0]) && !(alive[1] && has_task[1]) &&
                                  !(alive[2] && has_task[2]))
        :: r != NOWHERE && alive[r] -> assert(has_task[r])
        :: else -> assert(!(alive[0] && has_task[0]) && !(alive[1] && has_task[1]) &&
                          !(alive[2] && has_task[2]))
        fi;
#endif
        migration_over = 1
    }
}
#else
/* Nothing can move any more: the protocol has terminated, check the end. */
proctype Final()
{
    byte p, s, handled;
    atomic {
        timeout ->
        for (p : 0 .. N - 1) {
            assert(role[p] == IDLE && !frozen[p] && empty(held[p]))
        }
        if
        :: !killed ->
            assert(has_task[0] + has_task[1] + has_task[2] == 1);
            for (p : 0 .. N - 1) {
                assert(route[p] == route[REQ] && has_task[route[p]])
            }
            for (s : 0 .. 2) {
                assert(tlast[s] == K)
            }
            assert(fired == 1 && !timer_lost && !timer_due)
        :: killed ->
            assert(has_task[0] + has_task[1] + has_task[2] == 0);
            handled = tlast[0] + tlast[1] + tlast[2];
            assert(handled + dropped == 3 * K);
            assert(fired + timer_lost == 1)
        fi;
        migration_over = 1
    }
}
#endif


/* The protocol terminates: on every run, Final is reached. */
ltl terminates { <> migration_over }

init
{
    atomic {
        byte p;
        for (p : 0 .. N - 1) {
            route[p] = SRC;
            alive[p] = 1
        }
        has_task[SRC] = 1;
        run Proc(0); run Proc(1); run Proc(2);
        run Sender(0); run Sender(1); run Sender(2);
        run Requester();
#ifndef NO_TIMER
        run Timer();
#else
        timer_armed = 0; fired = 1;
#endif
#ifdef CRASH
        run Crash();
#endif
        run Final()
    }
}
