/* Offline unwinding with DWARF call frame information (cfi_unwind.h).
 *
 * Every value comes from untrusted bytes (the stack the kernel copied, the
 * CFI of files on disk): expressions run at most EXPR_STEPS operations on a
 * stack of EXPR_STACK values, memory is only what the source can read, and
 * a frame-pointer step must move up the stack. */
#include "cfi_unwind.h"

#include <dwarf.h>
#include <stdlib.h>

#define EXPR_STACK 64
#define EXPR_STEPS 1000

struct frame_state {
    struct asys_unwind_regs regs;
    int initial; /* the sampled frame: its pc is not a return address */
    int signal; /* unwound through a signal frame: its pc was interrupted, not a call */
};

enum step_result { STEP_OK, STEP_END, STEP_FAILED };

/* An expression's stack, bounded. */
struct expr_stack {
    uint64_t v[EXPR_STACK];
    unsigned n;
};

static int push(struct expr_stack *s, uint64_t v)
{
    if (s->n >= EXPR_STACK)
        return -1;
    s->v[s->n++] = v;
    return 0;
}

static int pop(struct expr_stack *s, uint64_t *v)
{
    if (!s->n)
        return -1;
    *v = s->v[--s->n];
    return 0;
}

static int reg_value(const struct frame_state *f, uint64_t regno, uint64_t *v)
{
    if (regno >= ASYS_UNWIND_REGS || !(f->regs.valid & (1u << regno)))
        return -1;
    *v = f->regs.value[regno];
    return 0;
}

/* The operators of two operands (DW_OP_and ... DW_OP_ne), -1 for others. */
static int binary_op(uint8_t atom, uint64_t a, uint64_t b, uint64_t *r)
{
    int64_t x = (int64_t)a, y = (int64_t)b;
    switch (atom) {
    case DW_OP_and:
        *r = a & b;
        return 0;
    case DW_OP_or:
        *r = a | b;
        return 0;
    case DW_OP_xor:
        *r = a ^ b;
        return 0;
    case DW_OP_plus:
        *r = a + b;
        return 0;
    case DW_OP_minus:
        *r = a - b;
        return 0;
    case DW_OP_mul:
        *r = a * b;
        return 0;
    case DW_OP_shl:
        *r = b < 64 ? a << b : 0;
        return 0;
    case DW_OP_shr:
        *r = b < 64 ? a >> b : 0;
        return 0;
    case DW_OP_shra:
        *r = (uint64_t)(b < 64 ? x >> b : x < 0 ? -1 : 0);
        return 0;
    case DW_OP_le:
        *r = x <= y;
        return 0;
    case DW_OP_ge:
        *r = x >= y;
        return 0;
    case DW_OP_eq:
        *r = x == y;
        return 0;
    case DW_OP_lt:
        *r = x < y;
        return 0;
    case DW_OP_gt:
        *r = x > y;
        return 0;
    case DW_OP_ne:
        *r = x != y;
        return 0;
    default:
        return -1;
    }
}

static int is_binary_op(uint8_t atom)
{
    uint64_t r;
    return binary_op(atom, 0, 1, &r) == 0;
}

/* The op a branch of `op` lands on (libdw keeps each op's byte offset). */
static const Dwarf_Op *branch_target(const Dwarf_Op *ops, size_t nops, const Dwarf_Op *op)
{
    Dwarf_Word to = op->offset + 1 + 2 + (uint64_t)(int64_t)(int16_t)op->number;
    for (size_t i = 0; i < nops; i++)
        if (ops[i].offset == to)
            return &ops[i];
    return NULL;
}

struct expr_context {
    const struct asys_unwind_source *src;
    const struct frame_state *frame; /* the registers the expression reads */
    uint64_t bias; /* of the mapping: DW_OP_addr operands are ELF addresses */
    const uint64_t *cfa; /* NULL while the CFA itself is computed */
};

/* One operation that is neither a branch nor a binary operator. */
static int simple_op(const struct expr_context *c, const Dwarf_Op *op, struct expr_stack *s,
                     int *is_location)
{
    uint64_t a, b;
    uint8_t atom = op->atom;
    if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31)
        return push(s, atom - DW_OP_lit0);
    if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
        return reg_value(c->frame, atom - DW_OP_reg0, &a) || push(s, a);
    if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31)
        return reg_value(c->frame, atom - DW_OP_breg0, &a) || push(s, a + op->number);
    switch (atom) {
    case DW_OP_addr:
        return push(s, op->number + c->bias);
    case DW_OP_const1u:
    case DW_OP_const1s:
    case DW_OP_const2u:
    case DW_OP_const2s:
    case DW_OP_const4u:
    case DW_OP_const4s:
    case DW_OP_const8u:
    case DW_OP_const8s:
    case DW_OP_constu:
    case DW_OP_consts:
        return push(s, op->number);
    case DW_OP_regx:
        return reg_value(c->frame, op->number, &a) || push(s, a);
    case DW_OP_bregx:
        return reg_value(c->frame, op->number, &a) || push(s, a + op->number2);
    case DW_OP_dup:
        return pop(s, &a) || push(s, a) || push(s, a);
    case DW_OP_drop:
        return pop(s, &a);
    case DW_OP_over:
        return pop(s, &a) || pop(s, &b) || push(s, b) || push(s, a) || push(s, b);
    case DW_OP_swap:
        return pop(s, &a) || pop(s, &b) || push(s, a) || push(s, b);
    case DW_OP_pick:
        return op->number >= s->n || push(s, s->v[s->n - 1 - op->number]);
    case DW_OP_deref:
        return pop(s, &a) || c->src->read(c->src->arg, a, &a) || push(s, a);
    case DW_OP_neg:
        return pop(s, &a) || push(s, (uint64_t) - (int64_t)a);
    case DW_OP_not:
        return pop(s, &a) || push(s, ~a);
    case DW_OP_abs:
        return pop(s, &a) || push(s, (int64_t)a < 0 ? (uint64_t) - (int64_t)a : a);
    case DW_OP_plus_uconst:
        return pop(s, &a) || push(s, a + op->number);
    case DW_OP_nop:
        return 0;
    case DW_OP_call_frame_cfa: /* libdw's own: a register saved at CFA + N */
        if (!c->cfa)
            return -1;
        *is_location = 1;
        return push(s, *c->cfa);
    case DW_OP_stack_value: /* libdw's own: the result is the value, not where it is */
        *is_location = 0;
        return 0;
    default:
        return -1; /* DW_OP_deref_size, TLS, typed ops: not in unwind tables */
    }
}

/* Evaluates a CFI expression: the value it computes, read from memory when
 * it computed a location. */
static int eval(const struct expr_context *c, const Dwarf_Op *ops, size_t nops, uint64_t *result)
{
    struct expr_stack s; /* not zeroed: 512 bytes per register rule, and only v[0..n) is read */
    s.n = 0;
    int is_location = 0;
    unsigned steps = 0;
    for (const Dwarf_Op *op = ops; op < ops + nops; op++) {
        uint64_t a, b, r;
        if (++steps > EXPR_STEPS)
            return -1;
        if (op->atom == DW_OP_bra || op->atom == DW_OP_skip) {
            if (op->atom == DW_OP_bra && (pop(&s, &a) || a == 0))
                continue;
            const Dwarf_Op *to = branch_target(ops, nops, op);
            if (!to)
                return -1;
            op = to - 1;
            continue;
        }
        if (is_binary_op(op->atom)) {
            if (pop(&s, &b) || pop(&s, &a))
                return -1;
            binary_op(op->atom, a, b, &r);
            if (push(&s, r))
                return -1;
            continue;
        }
        if (simple_op(c, op, &s, &is_location) != 0)
            return -1;
    }
    if (pop(&s, result))
        return -1;
    return is_location ? c->src->read(c->src->arg, *result, result) : 0;
}

static void set_reg(struct frame_state *f, unsigned regno, uint64_t v)
{
    f->regs.value[regno] = v;
    f->regs.valid |= 1u << regno;
}

_Static_assert(ASYS_CFI_REGS == ASYS_UNWIND_REGS, "a rule covers every register");

/* The caller's registers from the CFI rules of the frame's pc. */
static enum step_result apply_rule(const struct asys_unwind_source *src,
                                   const struct asys_cfi_rule *rule, const struct frame_state *cur,
                                   struct frame_state *next, uint64_t bias)
{
    uint64_t cfa;
    struct expr_context c = {src, cur, bias, NULL};
    if (rule->ra < 0 || rule->ra >= ASYS_UNWIND_REGS || !rule->cfa_count ||
        eval(&c, rule->ops, rule->cfa_count, &cfa) != 0)
        return STEP_FAILED;
    c.cfa = &cfa;
    int ra_undefined = 0;
    for (unsigned regno = 0; regno < ASYS_UNWIND_REGS; regno++) {
        uint64_t v;
        if (rule->reg_rule[regno] == ASYS_CFI_UNDEFINED) /* the return address ends the stack */
            ra_undefined |= (int)regno == rule->ra;
        else if (rule->reg_rule[regno] == ASYS_CFI_SAME && reg_value(cur, regno, &v) == 0)
            set_reg(next, regno, v);
        else if (rule->reg_rule[regno] == ASYS_CFI_EXPRESSION &&
                 eval(&c, rule->ops + rule->reg_first[regno], rule->reg_count[regno], &v) == 0)
            set_reg(next, regno, v);
    }
    if (ra_undefined)
        return STEP_END;
    if (!(next->regs.valid & (1u << ASYS_UNWIND_SP)))
        set_reg(next, ASYS_UNWIND_SP, cfa); /* x86-64: the caller's stack pointer is the CFA */
    next->signal = rule->signal;
    return next->regs.valid & (1u << rule->ra) ? STEP_OK : STEP_FAILED;
}

/* No CFI for the pc (code generated at run time, a file that is gone): the
 * rbp chain, as libdw's x86-64 backend does, while it moves up the stack. */
static enum step_result frame_pointer_step(const struct asys_unwind_source *src,
                                           const struct frame_state *cur, struct frame_state *next)
{
    uint64_t fp, sp, caller_fp = 0, ret;
    if (reg_value(cur, ASYS_UNWIND_FP, &fp) != 0 || reg_value(cur, ASYS_UNWIND_SP, &sp) != 0 ||
        fp < sp || fp > UINT64_MAX - 16 || src->read(src->arg, fp + 8, &ret) != 0)
        return STEP_FAILED;
    if (src->read(src->arg, fp, &caller_fp) != 0)
        caller_fp = 0;
    set_reg(next, ASYS_UNWIND_FP, caller_fp);
    set_reg(next, ASYS_UNWIND_SP, fp + 16);
    set_reg(next, ASYS_UNWIND_RA, ret);
    return STEP_OK;
}

static enum step_result step(const struct asys_unwind_source *src, const struct frame_state *cur,
                             struct frame_state *next)
{
    *next = (struct frame_state){.initial = 0};
    uint64_t pc = cur->regs.value[ASYS_UNWIND_RA];
    /* a return address: the call that made the frame is just before it */
    uint64_t at = cur->initial || cur->signal ? pc : pc - 1;
    uint64_t bias = 0;
    struct asys_elf_file *file = src->file_at(src->arg, at, &bias);
    const struct asys_cfi_rule *rule = NULL;
    int found = file ? asys_elf_file_rule(file, at - bias, &rule) : -1;
    if (found == 0) /* libdw too tries no other way once the CFI had an entry */
        return apply_rule(src, rule, cur, next, bias);
    if (found == -2)
        return STEP_FAILED;
    *next = (struct frame_state){.initial = 0};
    return frame_pointer_step(src, cur, next);
}

uint32_t asys_unwind(const struct asys_unwind_source *src, const struct asys_unwind_regs *regs,
                     uint64_t *frames, uint32_t max)
{
    struct frame_state cur = {.regs = *regs, .initial = 1}, next;
    uint32_t n = 0;
    if (!max || !(regs->valid & (1u << ASYS_UNWIND_RA)))
        return 0;
    frames[n++] = regs->value[ASYS_UNWIND_RA];
    while (n < max && step(src, &cur, &next) == STEP_OK) {
        uint64_t pc = next.regs.value[ASYS_UNWIND_RA];
        if (!pc)
            break; /* the outermost frame says so with a zero return address */
        frames[n++] = pc;
        cur = next;
    }
    return n;
}
