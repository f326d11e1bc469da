/* Cortex-M3 core registers (System Control Space) used by the port. Only
 * what tern touches; names follow the ARMv7-M Architecture Reference
 * Manual. */
#ifndef TERN_CM3_H
#define TERN_CM3_H

#include <stdint.h>

#define CM_REG(addr) (*(volatile uint32_t *)(addr))

/* System control block */
#define SCB_ICSR CM_REG(0xE000ED04u)
#define SCB_VTOR CM_REG(0xE000ED08u)
#define SCB_AIRCR CM_REG(0xE000ED0Cu)
#define SCB_SHPR1 CM_REG(0xE000ED18u) /* MemManage, BusFault, UsageFault */
#define SCB_SHPR3 CM_REG(0xE000ED20u) /* PendSV, SysTick */
#define SCB_SHCSR CM_REG(0xE000ED24u)
#define SCB_CFSR CM_REG(0xE000ED28u)
#define SCB_HFSR CM_REG(0xE000ED2Cu)
#define SCB_MMFAR CM_REG(0xE000ED34u)
#define SCB_BFAR CM_REG(0xE000ED38u)

#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSTCLR (1u << 25)
#define SHCSR_MEMFAULTENA (1u << 16)
#define SHCSR_BUSFAULTENA (1u << 17)
#define SHCSR_USGFAULTENA (1u << 18)

/* SysTick */
#define SYST_CSR CM_REG(0xE000E010u)
#define SYST_RVR CM_REG(0xE000E014u)
#define SYST_CVR CM_REG(0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* 1: processor clock */
#define SYST_CSR_COUNTFLAG (1u << 16)

/* NVIC, external interrupt n (0-based, vector 16 + n) */
#define NVIC_ISER(n) CM_REG(0xE000E100u + 4u * ((n) >> 5))
#define NVIC_ICER(n) CM_REG(0xE000E180u + 4u * ((n) >> 5))
#define NVIC_ISPR(n) CM_REG(0xE000E200u + 4u * ((n) >> 5))
#define NVIC_ICPR(n) CM_REG(0xE000E280u + 4u * ((n) >> 5))
#define NVIC_IPR8(n) (*(volatile uint8_t *)(0xE000E400u + (n)))
#define NVIC_STIR CM_REG(0xE000EF00u)
#define NVIC_BIT(n) (1u << ((n) & 31u))

static inline uint32_t cm_get_ipsr(void)
{
    uint32_t v;
    __asm volatile("mrs %0, ipsr" : "=r"(v));
    return v;
}

static inline void cm_set_basepri(uint32_t v)
{
    __asm volatile("msr basepri, %0" ::"r"(v) : "memory");
}

static inline void cm_dsb_isb(void)
{
    __asm volatile("dsb\n\tisb" ::: "memory");
}

#endif
