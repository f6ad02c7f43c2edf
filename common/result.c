/* SPDX-License-Identifier: Apache-2.0 */
#include "result.h"

#include <errno.h>

ncclResult_t rail_result(int rc)
{
    if (rc >= 0)
        return ncclSuccess;
    switch (-rc) {
    case EAGAIN:
    case EINPROGRESS:
        return ncclInProgress;
    case EINVAL:
    case EBADMSG:
    case EPROTO:
    case ENOENT:
        return ncclInvalidUsage;
    case EFAULT:
    case ERANGE:
    case E2BIG:
        return ncclInvalidArgument;
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case EPIPE:
    case EREMOTEIO:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETDOWN:
    case ENETUNREACH:
        return ncclRemoteError;
    case ENOMEM:
    case EIO:
    case EBUSY:
    case EPERM:
    case EACCES:
    case ENODEV:
    case ENOSYS:
    case EOPNOTSUPP:
    case EMFILE:
    case ENFILE:
        return ncclSystemError;
    default:
        return ncclInternalError;
    }
}
