#if canImport(Glibc)
import Glibc
#endif
import Logging
import NearbyProtocol
import SystemCall

/// The broker's poll(2) loop. Everything here runs on the broker's one thread: it owns every client,
/// the retained events and the listening socket, so none of it needs a lock.
final class BrokerLoop {
    private let configuration: SocketBrokerConfiguration
    private let listening: SocketListener.Listening
    private let inbox: BrokerInbox
    private let handler: any BrokerHandler
    private let logger: Logger
    private var clients: [Int32: BrokerClient] = [:]
    private var clientsByID: [ClientID: BrokerClient] = [:]
    private var retained = RetainedStore()
    private var nextClientID: UInt64 = 1
    private var acceptPaused = false
    /// Clients grouped by filter, with the answer per topic cached (SubscriptionIndex).
    private var subscriptions = SubscriptionIndex<BrokerClient>()
    /// Clients with bytes queued since their last write; each is listed once (`BrokerClient.isDirty`).
    private var dirty: [BrokerClient] = []
    private var flushing: [BrokerClient] = []
    /// A reply is queued: the next flush is not held for coalescing.
    private var replyQueued = false
    /// When events were last written; events are held until `writeCoalescingNanoseconds` after it.
    private var lastEventFlush: UInt64 = 0
    /// The poll set: the wake pipe, the listening socket, then `polled` in order. Rebuilt only when
    /// a client comes or goes; the interest bits are refreshed in place every turn.
    private var polled: [BrokerClient] = []
    private var pollSet: [pollfd] = []
    private var pollSetStale = true
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Counted locally and published once per loop turn, not once per event and client.
    private var delivered = 0
    private var dropped = 0

    init(configuration: SocketBrokerConfiguration, listening: SocketListener.Listening, inbox: BrokerInbox,
         handler: any BrokerHandler, logger: Logger) {
        self.configuration = configuration
        self.listening = listening
        self.inbox = inbox
        self.handler = handler
        self.logger = logger
    }

    func run() {
        logger.info("socket listening", metadata: ["path": "\(configuration.path)", "max_clients": "\(configuration.maxClients)"])
        while true {
            // Holding: events are written at the end of the coalescing window. Meanwhile events do
            // not wake the loop, so a burst costs no wake-ups (replies and shutdown still do). The
            // inbox is taken at every wake-up while holding, before any client's commands, so an
            // event published before a command still reaches that client before the reply.
            let hold = remainingHold()
            inbox.eventsWakeTheLoop(hold == nil)
            preparePollSet()
            let timeout = dirty.isEmpty ? nil : hold ?? 0
            do throws(Errno) {
                try SystemCall.retrying { Posix.poll(&pollSet, timeoutNanoseconds: timeout) }
            } catch {
                logger.critical("socket poll failed; closing the socket", metadata: ["errno": "\(error.rawValue)", "error": "\(error)"])
                break
            }
            if pollSet[0].revents != 0 || hold != nil {
                let (items, shutdown) = inbox.take()
                acceptPaused = false
                for item in items { handle(item) }
                if shutdown { break }
            }
            if pollSet[1].revents != 0 { acceptAll() }
            for (index, client) in polled.enumerated() {
                let revents = pollSet[index + 2].revents
                guard revents != 0, clients[client.fd] === client else { continue }
                if revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    // Both directions are gone: nobody can read a reply, so nothing more to answer.
                    close(client, reason: "connection closed by the client")
                    continue
                }
                if revents & Int16(POLLIN) != 0 { read(client) }
                if revents & Int16(POLLOUT) != 0 { markDirty(client) }
            }
            guard remainingHold() == nil else { continue }
            publishCounters()   // before writing: whatever a client reads is already counted
            flushDirty()
            publishCounters()
        }
        publishCounters()
        inbox.close()
        closeAll()
    }

    // MARK: polling

    private func preparePollSet() {
        if pollSetStale {
            polled = Array(clients.values)
            pollSet = [pollfd(fd: inbox.wakeFD, events: Int16(POLLIN), revents: 0), pollfd(fd: listening.fd, events: 0, revents: 0)]
            pollSet.reserveCapacity(polled.count + 2)
            for client in polled { pollSet.append(pollfd(fd: client.fd, events: 0, revents: 0)) }
            pollSetStale = false
        }
        pollSet[0].revents = 0
        pollSet[1].events = acceptPaused ? 0 : Int16(POLLIN)
        pollSet[1].revents = 0
        for (index, client) in polled.enumerated() {
            var events: Int16 = 0
            if !client.readClosed, client.framer.bufferedBytes < configuration.inputLimitBytes { events |= Int16(POLLIN) }
            // A dirty client is written at the end of this turn or of the coalescing hold anyway;
            // asking for POLLOUT meanwhile would only make poll return at once, again and again.
            if !client.outgoing.isEmpty, !client.isDirty { events |= Int16(POLLOUT) }
            pollSet[index + 2].events = events
            pollSet[index + 2].revents = 0
        }
    }

    /// How long to keep collecting events before writing them, or nil when not holding: nothing to
    /// write, a reply waiting, or the last write is at least the coalescing window ago.
    private func remainingHold() -> UInt64? {
        guard !dirty.isEmpty, !replyQueued, configuration.writeCoalescingNanoseconds > 0 else { return nil }
        let due = lastEventFlush + configuration.writeCoalescingNanoseconds
        let now = SystemCall.monotonicNanoseconds()
        return now < due ? due - now : nil
    }

    // MARK: inbox

    private func handle(_ item: BrokerInbox.Item) {
        switch item {
        case .event(let event):
            // The broker frees last when a flood of found entries expires (the manager has already
            // dropped its own): glibc keeps freed memory for reuse, so hand it back here, only after
            // a large release (malloc_trim walks every arena).
            if retained.apply(event) { SystemCall.releaseFreeHeap() }
            if event.retain != .none {
                let count = retained.count
                inbox.updateStatistics { $0.retained = count }
            }
            let subscribers = subscriptions.subscribers(of: event.topic)
            guard !subscribers.isEmpty else { return }
            let line = ReplyLine.eventBytes(topic: event.topic, json: event.json, retained: false)
            for client in subscribers { enqueueEvent(line, to: client) }
        case .reply(let id, let reply):
            guard let client = clientsByID[id] else { return }   // gone meanwhile; close() chained the disconnect
            client.inFlight = nil
            send(ReplyLine.encode(reply), to: client)
            processInput(client)
            finishIfDone(client)
        case .retained(let topics, let answer):
            answer(retained.matching { topics?.contains($0) ?? true })
        }
    }

    // MARK: accepting

    private func acceptAll() {
        while true {
            let accepted: Posix.IOResult
            let listeningFD = listening.fd
            do throws(SocketBrokerError) {
                accepted = try Posix.io("accept4", path: configuration.path) { Int(Posix.acceptNonBlocking(listeningFD)) }
            } catch {
                if error.errno == ECONNABORTED { continue }
                // Out of descriptors or memory: stop accepting until a client leaves or the loop is woken,
                // instead of spinning on a listening socket that stays readable.
                logger.warning("socket accept failed", metadata: ["path": "\(configuration.path)", "error": "\(error)"])
                acceptPaused = true
                return
            }
            guard case .done(let value) = accepted else { return }
            let fd = Int32(value)
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        let credentials = Posix.peerCredentials(fd)
        let peer: Logger.Metadata = ["pid": "\(credentials.map { String($0.pid) } ?? "?")", "uid": "\(credentials.map { String($0.uid) } ?? "?")"]
        guard clients.count < configuration.maxClients else {
            // The fresh socket's send buffer is empty, so this one short line is written whole.
            let line = ReplyLine.error(.tooManyClients, "the gateway serves at most \(configuration.maxClients) clients; try again later")
            _ = line.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
            Glibc.close(fd)
            inbox.updateStatistics { $0.clientsRefused += 1 }
            logger.warning("socket client refused: max_clients reached", metadata: peer.merging(["max_clients": "\(configuration.maxClients)"]) { $1 })
            return
        }
        let id = ClientID(rawValue: nextClientID)
        nextClientID += 1
        let info = ClientInfo(id: id, pid: credentials?.pid, uid: credentials?.uid, gid: credentials?.gid)
        let client = BrokerClient(fd: fd, info: info, configuration: configuration)
        clients[fd] = client
        clientsByID[id] = client
        pollSetStale = true
        let count = clients.count
        inbox.updateStatistics { $0.clients = count; $0.clientsAccepted += 1 }
        logger.info("socket client connected", metadata: peer.merging(["client": "\(id)"]) { $1 })
    }

    // MARK: reading and commands

    private func read(_ client: BrokerClient) {
        // A few reads per wake-up, so one flooding client cannot starve the others.
        for _ in 0..<4 where !client.readClosed && client.framer.bufferedBytes < configuration.inputLimitBytes {
            let result: Posix.IOResult
            do throws(SocketBrokerError) {
                let path = configuration.path
                result = try readBuffer.withUnsafeMutableBytes { raw in
                    Result { () throws(SocketBrokerError) in
                        try Posix.io("read", path: path) { Glibc.read(client.fd, raw.baseAddress, raw.count) }
                    }
                }.get()
            } catch {
                close(client, reason: "\(error)")
                return
            }
            switch result {
            case .wouldBlock: break
            case .done(0): client.readClosed = true
            case .done(let count): client.framer.append(readBuffer[0..<count])
            }
            processInput(client)
            if result == .wouldBlock { break }
        }
        finishIfDone(client)
    }

    /// Answers buffered lines in order until one needs the handler or the client's queue is full.
    private func processInput(_ client: BrokerClient) {
        while client.inFlight == nil, !client.outgoing.isAboveLimit {
            guard let output = client.framer.next() else {
                client.inputExhausted = true
                return
            }
            switch output {
            case .tooLong:
                send(ReplyLine.error(.tooLong, "a line is at most \(SocketBrokerConfiguration.maxLineBytes) bytes including its newline; it was skipped"), to: client)
            case .line(let bytes):
                do {
                    guard let command = try SocketCommand.parse(bytes) else { continue }
                    execute(command, for: client)
                } catch {
                    send(ReplyLine.error(error), to: client)
                }
            }
        }
        client.inputExhausted = false
    }

    private func execute(_ command: SocketCommand, for client: BrokerClient) {
        switch command {
        case .ping:
            send(ReplyLine.pong, to: client)
        case .subscribe(let filter):
            if !client.subscriptions.contains(filter) {
                guard client.subscriptions.count < configuration.maxSubscriptionsPerClient else {
                    send(ReplyLine.error(.limit, "at most \(configuration.maxSubscriptionsPerClient) subscriptions per client"), to: client)
                    return
                }
                client.subscriptions.append(filter)
                subscriptions.subscribe(client, to: filter)
            }
            send(ReplyLine.encode(.ok()), to: client)
            for event in retained.matching(filter) {
                enqueueEvent(ReplyLine.eventBytes(topic: event.topic, json: event.json, retained: true), to: client)
            }
        case .unsubscribe(let filter):
            client.subscriptions.removeAll { $0 == filter }
            subscriptions.unsubscribe(client, from: filter)
            send(ReplyLine.encode(.ok()), to: client)
        case .request(let request):
            let (handler, inbox, info) = (handler, inbox, client.info)
            client.inFlight = Task {
                let reply = await handler.handle(request, client: info)
                inbox.post(.reply(info.id, reply))
            }
        }
    }

    // MARK: writing

    private func send(_ line: String, to client: BrokerClient) {
        client.outgoing.appendReply(line.utf8)
        markDirty(client)
        replyQueued = true
    }

    private func markDirty(_ client: BrokerClient) {
        guard !client.isDirty else { return }
        client.isDirty = true
        dirty.append(client)
    }

    private func enqueueEvent(_ line: [UInt8], to client: BrokerClient) {
        if client.outgoing.appendEvent(line) {
            markDirty(client)
            delivered += 1
        } else {
            client.droppedSinceReport += 1
            dropped += 1
        }
    }

    private func publishCounters() {
        guard delivered > 0 || dropped > 0 else { return }
        let (delivered, dropped) = (delivered, dropped)
        inbox.updateStatistics {
            $0.eventsDelivered += delivered
            $0.eventsDropped += dropped
        }
        self.delivered = 0
        self.dropped = 0
    }

    private func flushDirty() {
        guard !dirty.isEmpty else { return }
        lastEventFlush = SystemCall.monotonicNanoseconds()
        replyQueued = false
        swap(&dirty, &flushing)   // writing may queue replies, which start the next dirty list
        for client in flushing {
            client.isDirty = false
            guard clients[client.fd] === client else { continue }
            flush(client)
        }
        flushing.removeAll(keepingCapacity: true)
    }

    private func flush(_ client: BrokerClient) {
        do throws(SocketBrokerError) {
            try write(client)
            if client.droppedSinceReport > 0, client.outgoing.count <= client.outgoing.limit / 2 {
                let json = "{\"count\":\(client.droppedSinceReport)}"
                client.outgoing.appendReply(ReplyLine.event(topic: "$SYS/dropped", json: json, retained: false).utf8)
                client.droppedSinceReport = 0
                try write(client)
            }
        } catch {
            close(client, reason: "\(error)")
            return
        }
        if client.inFlight == nil, !client.inputExhausted, !client.outgoing.isAboveLimit {
            processInput(client)   // it was paused by a full queue; replies it adds go out on POLLOUT
        }
        finishIfDone(client)
    }

    private func write(_ client: BrokerClient) throws(SocketBrokerError) {
        let path = configuration.path
        try client.outgoing.flush { (bytes) throws(SocketBrokerError) -> Int? in
            let result = try Posix.io("send", path: path) { Glibc.send(client.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            if case .done(let count) = result { return count }
            return nil
        }
    }

    // MARK: closing

    private func finishIfDone(_ client: BrokerClient) {
        guard clients[client.fd] === client, client.readClosed, client.inFlight == nil, client.inputExhausted,
              client.outgoing.isEmpty else { return }
        if client.framer.bufferedBytes > 0 {
            logger.debug("socket client left an unterminated line; ignored", metadata: ["client": "\(client.info.id)", "bytes": "\(client.framer.bufferedBytes)"])
        }
        close(client, reason: "end of input")
    }

    private func close(_ client: BrokerClient, reason: String) {
        guard clients[client.fd] === client else { return }
        clients[client.fd] = nil
        clientsByID[client.info.id] = nil
        subscriptions.remove(client, filters: client.subscriptions)
        pollSetStale = true
        Glibc.close(client.fd)
        acceptPaused = false
        let count = clients.count
        inbox.updateStatistics { $0.clients = count }
        logger.info("socket client disconnected", metadata: ["client": "\(client.info.id)", "reason": "\(reason)"])
        // After the request in flight, if any: its publication must not outlive the disconnect.
        let (handler, previous, id) = (handler, client.inFlight, client.info.id)
        Task {
            await previous?.value
            await handler.clientDisconnected(id)
        }
    }

    private func closeAll() {
        for client in Array(clients.values) {
            try? write(client)   // best effort: a reply already queued may still fit in the socket
            close(client, reason: "gateway shutting down")
        }
        Glibc.close(listening.fd)
        SocketListener.remove(listening, path: configuration.path)
        logger.info("socket closed", metadata: ["path": "\(configuration.path)"])
    }
}
