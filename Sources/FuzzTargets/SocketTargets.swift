#if DEBUG || FUZZING
@testable import Broker
@testable import NearbyProtocol

/// What a socket client sends: bytes cut anywhere, framed into lines, parsed into commands.
enum SocketTargets {
    static let topics = ["found/livingroom/greeting", "lost/a/b", "$SYS/error/bluetooth-power", "found/eddystone/00/11",
                         "found", "/", "//", "found/+/x", "$SYS", "a/b/c/d/e/f"]

    static func socketLine(_ input: FuzzInput) {
        var input = input
        let maxLine = 64 + Int(input.byte())   // small bounds reach the too-long paths with small inputs
        var framer = LineFramer(maxLineBytes: maxLine)
        let cuts = (0..<3).map { _ in Int(input.byte()) + 1 }
        var piece = 0
        while !input.isEmpty {
            let chunk = input.take(cuts[piece % cuts.count])
            piece += 1
            framer.append(chunk)
            while let output = framer.next() {
                guard case .line(let line) = output else { continue }
                require(line.count < maxLine, "a line of \(line.count) bytes passed a bound of \(maxLine)")
                command(line)
            }
            require(framer.bufferedBytes < maxLine + chunk.count, "framer holds \(framer.bufferedBytes) bytes")
        }
    }

    private static func command(_ line: [UInt8]) {
        guard let parsed = try? SocketCommand.parse(line) else { return }
        switch parsed {
        case .subscribe(let filter), .unsubscribe(let filter):
            let again = try? TopicFilter(parsing: filter.text)
            require(again == filter, "filter '\(filter.text)' does not parse back to itself")
            for topic in topics where TopicName.isValid(topic) { _ = filter.matches(topic) }
            _ = filter.matches(filter.text)
            _ = filter.hasWildcards
        case .request(.publish(let request)):
            require(Base64.decode(Base64.encode(request.message.content)) == request.message.content, "base64 round trip")
            _ = ReplyLine.encode(.ok("\(request)"))
        case .request, .ping:
            break
        }
    }
}
#endif
