#include "hggc_tally.h"

#include <stdlib.h>
#include <string.h>

#include "asys_format.h"

#define MAX_ERRORS 16

struct process_status {
    uint32_t pid;
    unsigned code; /* enum asys_hggc_status_code: the most telling seen */
    uint64_t cupti_version;
    char message[ASYS_HGGC_STATUS_MESSAGE_MAX + 1];
};

struct asys_hggc_tally {
    struct process_status *processes;
    size_t count, cap;
    uint64_t dropped_records;
    uint64_t overhead_records;
    uint64_t overhead_ns;
    char *errors[MAX_ERRORS];
    size_t error_count;
};

struct asys_hggc_tally *asys_hggc_tally_new(void)
{
    return calloc(1, sizeof(struct asys_hggc_tally));
}

void asys_hggc_tally_free(struct asys_hggc_tally *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->error_count; i++)
        free(t->errors[i]);
    free(t->processes);
    free(t);
}

static struct process_status *process_of(struct asys_hggc_tally *t, uint32_t pid)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->processes[i].pid == pid)
            return &t->processes[i];
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        struct process_status *bigger = realloc(t->processes, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        t->processes = bigger;
        t->cap = cap;
    }
    struct process_status *p = &t->processes[t->count++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* Unavailable or busy outranks attached: a process reports one of them. */
static int rank(unsigned code)
{
    return code == ASYS_HGGC_CUPTI_UNAVAILABLE || code == ASYS_HGGC_SUBSCRIBER_BUSY ? 2
           : code == ASYS_HGGC_ATTACHED                                             ? 1
                                                                                    : 0;
}

static void add_status(struct asys_hggc_tally *t, uint32_t pid, const struct asys_record *rec)
{
    const struct asys_rec_hggc_status *s = (const void *)rec->data;
    size_t length = s->message_length;
    if (length > rec->size - sizeof *s)
        length = rec->size - sizeof *s;
    if (length > ASYS_HGGC_STATUS_MESSAGE_MAX)
        length = ASYS_HGGC_STATUS_MESSAGE_MAX;
    const char *text = (const char *)(s + 1);
    if (rec->arg == ASYS_HGGC_CUPTI_DROPPED) {
        t->dropped_records += s->value;
        return;
    }
    if (rec->arg == ASYS_HGGC_CUPTI_ERROR) {
        if (t->error_count < MAX_ERRORS && (t->errors[t->error_count] = strndup(text, length)))
            t->error_count++;
        return;
    }
    struct process_status *p = process_of(t, pid);
    if (!p || rank(rec->arg) < rank(p->code))
        return;
    p->code = rec->arg;
    if (rec->arg == ASYS_HGGC_ATTACHED)
        p->cupti_version = s->value;
    memcpy(p->message, text, length);
    p->message[length] = '\0';
}

void asys_hggc_tally_add(struct asys_hggc_tally *t, uint32_t pid, const struct asys_record *rec)
{
    if (!t)
        return;
    if (rec->type == ASYS_REC_HGGC_STATUS && rec->size >= sizeof(struct asys_rec_hggc_status)) {
        add_status(t, pid, rec);
    } else if (rec->type == ASYS_REC_HGGC_OVERHEAD &&
               rec->size >= sizeof(struct asys_rec_hggc_overhead)) {
        const struct asys_rec_hggc_overhead *o = (const void *)rec->data;
        t->overhead_records++;
        if (o->end_ns > o->start_ns)
            t->overhead_ns += o->end_ns - o->start_ns;
    }
}

static const char *status_name(unsigned code)
{
    switch (code) {
    case ASYS_HGGC_ATTACHED:
        return "attached";
    case ASYS_HGGC_CUPTI_UNAVAILABLE:
        return "cupti unavailable";
    case ASYS_HGGC_SUBSCRIBER_BUSY:
        return "subscriber busy";
    default:
        return "unknown";
    }
}

cJSON *asys_hggc_tally_json(const struct asys_hggc_tally *t)
{
    if (!t || (!t->count && !t->error_count && !t->overhead_records))
        return NULL;
    cJSON *o = cJSON_CreateObject();
    /* the whole run: attached only if every process attached */
    const struct process_status *worst = NULL;
    for (size_t i = 0; i < t->count; i++)
        if (!worst || rank(t->processes[i].code) > rank(worst->code))
            worst = &t->processes[i];
    cJSON_AddStringToObject(o, "status", worst ? status_name(worst->code) : "unknown");
    if (worst && worst->message[0])
        cJSON_AddStringToObject(o, "message", worst->message);
    for (size_t i = 0; i < t->count; i++)
        if (t->processes[i].cupti_version) {
            cJSON_AddNumberToObject(o, "cupti_version", (double)t->processes[i].cupti_version);
            break;
        }
    cJSON_AddNumberToObject(o, "cupti_dropped_records", (double)t->dropped_records);
    cJSON_AddNumberToObject(o, "cupti_overhead_records", (double)t->overhead_records);
    cJSON_AddNumberToObject(o, "cupti_overhead_ns", (double)t->overhead_ns);
    cJSON *processes = cJSON_AddArrayToObject(o, "processes");
    for (size_t i = 0; i < t->count; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "pid", t->processes[i].pid);
        cJSON_AddStringToObject(p, "status", status_name(t->processes[i].code));
        if (t->processes[i].message[0])
            cJSON_AddStringToObject(p, "message", t->processes[i].message);
        cJSON_AddItemToArray(processes, p);
    }
    if (t->error_count) {
        cJSON *errors = cJSON_AddArrayToObject(o, "errors");
        for (size_t i = 0; i < t->error_count; i++)
            cJSON_AddItemToArray(errors, cJSON_CreateString(t->errors[i]));
    }
    return o;
}
