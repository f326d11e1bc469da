/* Thread contexts on the AVR (the thread models' half of the port, see
 * kernel/thread.h).
 *
 * The AVR has no PendSV and no interrupt priorities: an interrupt runs with
 * I clear until its RETI, and nothing can be pended to run "after the last
 * handler". So a switch the kernel requests (port_thread_switch, made with
 * interrupts disabled whenever it cannot be taken at once) is only noted in
 * avr_switch_pending and taken in software where interrupts would be
 * enabled again outside any handler:
 *   - the end of a critical section that re-enables them
 *     (port_irq_restore, port_irq_enable in port_avr.c);
 *   - the end of an interrupt: under the thread models every vector jumps
 *     to avr_irq_n below, which runs the board's handler (__vector_n) and,
 *     back on the interrupted thread's stack, takes the switch before its
 *     RETI; the thread resumes there, and RETIs, when it next runs.
 *
 * avr_thread_switch_now saves the full context on the running thread's
 * stack (r0, SREG, r1-r31: 33 bytes plus the 2-byte return address),
 * calls thread_switch(SP) and pops the same frame from the stack pointer
 * it returns. It is always called, so the call-clobbered registers are
 * saved twice (by the caller or avr_irq_common, and here); saving all 32
 * keeps one frame layout for every entry path and for a new thread's
 * first frame.
 *
 * main()'s stack, the region between .bss and RAMEND that the thread models
 * would otherwise abandon (main() never runs again; its frame stays intact
 * at the top, since an app may have handed the kernel pointers into it),
 * is where everything but the threads' own code runs:
 *   - the idle thread: the kernel's idle stack is only its guard
 *     (TERN_IDLE_STACK, boards/atmega128/board_config.h);
 *   - the scheduler (thread_switch) and every interrupt handler, right
 *     below the idle thread's frame when another thread runs (that frame
 *     is saved and still while it does), on top of it while idle runs.
 * So a thread stack holds the thread's own calls, at most one 9-byte
 * interrupt entry frame and one 35-byte switch frame, never a handler or
 * the scheduler: 4 KiB of RAM have no room for that on every stack. An
 * overflow of main()'s stack breaks the paint at the bottom of its reserve
 * (AVR_MAIN_STACK, avr.h), checked on every switch like a thread's guard.
 *
 * No MPU: port_thread_guard is a no-op; a thread's overflow is caught by
 * the kernel's check of the saved stack pointer and the guard's paint on
 * every switch. */
#include <avr/io.h>

#include "avr.h"
#include "tern/console.h"
#include "../../kernel/thread.h" /* the thread models' port interface */

#define TERN_STR_(x) #x
#define TERN_STR(x) TERN_STR_(x)

/* Set by port_thread_switch, cleared by the switch that takes it. */
volatile uint8_t avr_switch_pending;
/* The idle thread's saved stack pointer (main()'s stack): the scheduler
 * and the interrupt handlers run below it while another thread runs. */
uint8_t *avr_idle_sp;

void avr_thread_switch_now(void); /* interrupts disabled */
void avr_thread_entry(void);      /* the first return of every thread */
void avr_thread_returned(void);
void *avr_schedule(void *sp);

/* A switch, interrupts disabled by the caller. Frame, from the highest
 * address down: return address (2), r0, SREG, r1, r2 .. r31; SP then
 * points at the next free byte below r31, and that SP is the thread's
 * saved stack pointer. A stack pointer in main()'s reserve (the top
 * AVR_MAIN_STACK bytes of RAM) is the idle thread's: the scheduler runs on
 * where it is; any other thread's stack lies below, in the pool, and the
 * scheduler moves to below the idle thread's saved frame. */
__asm__(".section .text.avr_thread_switch_now,\"ax\",@progbits\n"
        ".global avr_thread_switch_now\n"
        ".type avr_thread_switch_now, @function\n"
        "avr_thread_switch_now:\n"
        "\tpush r0\n"
        "\tin r0, __SREG__\n"
        "\tpush r0\n"
        ".irp r,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
        "29,30,31\n"
        "\tpush r\\r\n"
        ".endr\n"
        "\tclr r1\n"
        "\tsts avr_switch_pending, r1\n"
        "\tin r24, __SP_L__\n"
        "\tin r25, __SP_H__\n"
        "\tldi r26, hi8(__stack_top - " TERN_STR(AVR_MAIN_STACK) ")\n"
        "\tcpi r24, lo8(__stack_top - " TERN_STR(AVR_MAIN_STACK) ")\n"
        "\tcpc r25, r26\n"
        "\tbrlo 1f\n"
        "\tsts avr_idle_sp+1, r25\n"
        "\tsts avr_idle_sp, r24\n"
        "\trjmp 2f\n"
        "1:\n"
        "\tlds r28, avr_idle_sp\n"
        "\tlds r29, avr_idle_sp+1\n"
        "\tout __SP_H__, r29\n"
        "\tout __SP_L__, r28\n"
        "2:\n"
        "\tcall avr_schedule\n"
        "\tout __SP_H__, r25\n"
        "\tout __SP_L__, r24\n"
        ".irp r,31,30,29,28,27,26,25,24,23,22,21,20,19,18,17,16,15,14,13,12,11,10,9,8,7,6,5,"
        "4,3,2,1\n"
        "\tpop r\\r\n"
        ".endr\n"
        "\tpop r0\n"
        "\tout __SREG__, r0\n"
        "\tpop r0\n"
        "\tret\n"
        ".size avr_thread_switch_now, . - avr_thread_switch_now\n"
        ".text\n");

/* main()'s stack is painted by the reset code (arch/avr/startup.c); the
 * two lowest bytes of its reserve are its guard. */

void *avr_schedule(void *sp)
{
    const uint8_t *lo = __stack_top - AVR_MAIN_STACK;
    if (lo[0] != AVR_STACK_PAINT || lo[1] != AVR_STACK_PAINT) {
        tern_printf("\ntern: stack overflow in main()'s stack (idle, scheduler): %u bytes\n",
                    (unsigned)AVR_MAIN_STACK);
        port_exit(TERN_EXIT_STACK_OVERFLOW);
    }
    return thread_switch(sp);
}

#if TERN_THREAD_STACK_POOL == 0
/* The thread stack pool (kernel/thread.h): it starts where .bss ends (an
 * empty section the linker places right after .bss) and takes all RAM up
 * to main()'s reserve. The kernel reads its size, a const to it, only
 * after reset has stored it here. */
__asm__(".section .tern_thread_pool,\"aw\",@nobits\n"
        ".global thread_stack_pool\n"
        "thread_stack_pool:\n"
        ".section .bss.thread_stack_pool_bytes,\"aw\",@nobits\n"
        ".global thread_stack_pool_bytes\n"
        "thread_stack_pool_bytes:\n"
        "\t.skip 4\n"
        ".text\n");
extern uint32_t avr_pool_bytes __asm__("thread_stack_pool_bytes");

bool avr_thread_pool_init(void)
{
    uint8_t *lo = (uint8_t *)thread_stack_pool, *hi = __stack_top - AVR_MAIN_STACK;
    avr_pool_bytes = lo == __stack_limit && hi > lo ? (uint32_t)(hi - lo) : 0;
    return hi >= __stack_limit;
}
#else
bool avr_thread_pool_init(void) { return __stack_top - AVR_MAIN_STACK >= __stack_limit; }
#endif

/* Where a new thread's first frame returns to: r16:r17 hold the entry
 * function, r14:r15 its argument. Interrupts are enabled through
 * port_irq_enable, which first takes a switch requested meanwhile. */
__asm__(".section .text.avr_thread_entry,\"ax\",@progbits\n"
        ".global avr_thread_entry\n"
        ".type avr_thread_entry, @function\n"
        "avr_thread_entry:\n"
        "\tcall port_irq_enable\n"
        "\tmovw r24, r14\n"
        "\tmovw r30, r16\n"
        "\ticall\n"
        "\tjmp avr_thread_returned\n"
        ".size avr_thread_entry, . - avr_thread_entry\n"
        ".text\n");

/* Interrupt entry. Vector n (arch/avr/startup.c) jumps to avr_irq_n,
 * which loads the board's handler __vector_n into Z; avr_irq_common saves
 * r0, SREG, r24 and Y (9 bytes with the return address and Z), moves to
 * main()'s stack unless already on it (the idle thread, or before the
 * threads start), calls the handler (an ISR(): it saves what it uses and
 * ends in RETI, whose I is cleared again at once: the AVR runs one more
 * instruction after a RETI before serving the next interrupt), moves back
 * to the interrupted stack and takes a switch one of the handlers asked
 * for, before restoring and RETI. */
__asm__(".irp n,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
        "29,30,31,32,33,34\n"
        ".section .text.avr_irq_\\n,\"ax\",@progbits\n"
        ".global avr_irq_\\n\n"
        ".type avr_irq_\\n, @function\n"
        "avr_irq_\\n:\n"
        "\tpush r30\n"
        "\tpush r31\n"
        "\tldi r30, lo8(gs(__vector_\\n))\n"
        "\tldi r31, hi8(gs(__vector_\\n))\n"
        "\tjmp avr_irq_common\n"
        ".size avr_irq_\\n, . - avr_irq_\\n\n"
        ".endr\n"
        ".section .text.avr_irq_common,\"ax\",@progbits\n"
        ".type avr_irq_common, @function\n"
        "avr_irq_common:\n"
        "\tpush r0\n"
        "\tin r0, __SREG__\n"
        "\tpush r0\n"
        "\tpush r24\n"
        "\tpush r28\n"
        "\tpush r29\n"
        "\tin r28, __SP_L__\n"
        "\tin r29, __SP_H__\n"
        "\tldi r24, hi8(__stack_top - " TERN_STR(AVR_MAIN_STACK) ")\n"
        "\tcpi r28, lo8(__stack_top - " TERN_STR(AVR_MAIN_STACK) ")\n"
        "\tcpc r29, r24\n"
        "\tbrsh 1f\n"
        "\tlds r24, avr_idle_sp\n"
        "\tout __SP_L__, r24\n"
        "\tlds r24, avr_idle_sp+1\n"
        "\tout __SP_H__, r24\n"
        "1:\n"
        "\ticall\n"
        "\tcli\n"
        "\tout __SP_H__, r29\n"
        "\tout __SP_L__, r28\n"
        "\tlds r24, avr_switch_pending\n"
        "\ttst r24\n"
        "\tbreq 2f\n"
        "\tcall avr_thread_switch_now\n"
        "2:\n"
        "\tpop r29\n"
        "\tpop r28\n"
        "\tpop r24\n"
        "\tpop r0\n"
        "\tout __SREG__, r0\n"
        "\tpop r0\n"
        "\tpop r31\n"
        "\tpop r30\n"
        "\treti\n"
        ".size avr_irq_common, . - avr_irq_common\n"
        ".text\n");

/* A thread that returns from its entry function: the kernel's bodies loop
 * forever, so this is a bug worth stopping for. */
__attribute__((used, noreturn)) void avr_thread_returned(void)
{
    tern_printf("\ntern: a thread returned\n");
    port_exit(AVR_EXIT_FAULT);
}

void *port_thread_init(uint8_t *stack_lo, uint32_t size, void (*entry)(void *), void *arg)
{
    uint8_t *sp = stack_lo + size - 1; /* the top byte; SP points at the next free one */
    uint16_t pc = (uint16_t)(uintptr_t)avr_thread_entry; /* a word address, as RET wants */
    uint16_t e = (uint16_t)(uintptr_t)entry, a = (uint16_t)(uintptr_t)arg;
    *sp-- = (uint8_t)pc; /* RET pops the high byte first, from the lower address */
    *sp-- = (uint8_t)(pc >> 8);
    *sp-- = 0; /* r0 */
    *sp-- = 0; /* SREG: I clear, avr_thread_entry enables interrupts */
    for (uint8_t r = 1; r < 32; r++) {
        uint8_t v = 0;
        if (r == 14)
            v = (uint8_t)a;
        else if (r == 15)
            v = (uint8_t)(a >> 8);
        else if (r == 16)
            v = (uint8_t)e;
        else if (r == 17)
            v = (uint8_t)(e >> 8);
        *sp-- = v;
    }
    return sp;
}

/* Taken at once when interrupts are enabled outside any handler; otherwise
 * when they are (port_irq_restore, port_irq_enable) or when the handler
 * ends (avr_irq_common). */
void port_thread_switch(void)
{
    avr_switch_pending = 1;
    if ((SREG & _BV(SREG_I)) && !sched_in_isr()) {
        __asm__ volatile("cli" ::: "memory");
        avr_thread_switch_now();
        __asm__ volatile("sei" ::: "memory");
    }
}

void port_thread_guard(uint8_t *stack_lo)
{
    (void)stack_lo;
}

/* Become the idle thread, on main()'s stack right below the frames of
 * main() and the kernel calls that led here (the idle thread's own stack,
 * stack_top, stays unused but for its guard: see the top of this file),
 * with interrupts enabled, after a switch to the first ready thread if
 * one was requested (threads_start does). */
void port_thread_start(uint8_t *stack_top, void (*entry)(void *), void *arg)
{
    (void)stack_top;
    __asm__ volatile("cli\n\t"
                     "movw r16, %0\n\t"
                     "movw r14, %1\n\t"
                     "jmp avr_thread_entry\n"
                     :
                     : "r"(entry), "r"(arg)
                     : "r14", "r15", "r16", "r17", "memory");
    __builtin_unreachable();
}

/* The linker's check of main()'s stack (boards/atmega128/atmega128.ld
 * asks 384 bytes for the run-to-completion models, where every handler
 * nests on it): here only enough to print a refusal (avr.h). */
__asm__(".global __stack_min\n.set __stack_min, " TERN_STR(AVR_MAIN_STACK_LINK) "\n");
