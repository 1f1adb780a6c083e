// Preloaded (`node --import`) into every runnable README example: sockets may connect to the
// loopback interface (and Unix sockets) only, so an example that reaches the internet fails loudly.

import net from 'node:net';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/i;
const connect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function connectLoopbackOnly(...args) {
  const first = args[0];
  const options = Array.isArray(first) ? first[0] : first;
  const host = typeof options === 'object' && options !== null ? options.host : args[1];
  const path = typeof options === 'object' && options !== null ? options.path : undefined;
  if (
    path === undefined &&
    typeof options !== 'string' &&
    host !== undefined &&
    !LOOPBACK.test(String(host))
  ) {
    throw new Error(`README examples run offline: connecting to ${host} is not allowed (loopback only)`);
  }
  return connect.apply(this, args);
};
