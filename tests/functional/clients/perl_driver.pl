#!/usr/bin/perl
# The client-library workload (see test_client_libraries.py) for Perl's
# Cache::Memcached::Fast (text protocol; its *_multi calls pipeline).
#
#     perl perl_driver.pl PREFIX HOST:PORT...
#
# Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
# and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
# Results are what the library returns (1, "", undef, "0E0" ...), unconverted.
use strict;
use warnings;
use Cache::Memcached::Fast;
use Digest::MD5 qw(md5_hex);
use JSON::PP;
use Time::HiRes qw(sleep);

use constant TTL => 2;
use constant TTL_SLEEP => 3.2;

sub make_value {
    my ($n) = @_;
    my $out = '';
    for (my $i = 0; length($out) < $n; $i++) { $out .= "$i." }
    return substr($out, 0, $n);
}

sub show {
    my ($v) = @_;
    return $v if !defined $v || ref $v;
    return '<' . length($v) . ' bytes md5 ' . md5_hex($v) . '>' if length($v) > 64;
    return $v;
}

sub client {
    my ($addr, $nowait) = @_;
    # max_size: the default (512 KiB) refuses the 900 KB value in the client.
    # compress_threshold -1: the large values cross the wire at full size.
    return Cache::Memcached::Fast->new({
        servers => [$addr], max_size => 1024 * 1024, compress_threshold => -1,
        connect_timeout => 5, io_timeout => 10, max_failures => 0, utf8 => 0, nowait => $nowait ? 1 : 0,
    });
}

my ($P, @addrs) = @ARGV;
# Every byte value, then reply lines a careless proxy might parse as its own.
my $nasty = join('', map { chr } 0 .. 255) . "\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n";
my $big100 = make_value(100_000);
my $big900 = make_value(900_000);
my $maxkey = "${P}maxkey" . ('k' x (250 - length($P) - length('maxkey')));
my @multi = map { "${P}m$_" } 0 .. 49;

sub multi_result {
    my ($found) = @_;
    return $found unless ref $found eq 'HASH';
    return { map { substr($_, length $P) => show($found->{$_}) } keys %$found };
}

my @steps = (
    [set_small => sub { $_[0]->set("${P}small", 'hello world') }],
    [get_small => sub { show($_[0]->get("${P}small")) }],
    [get_missing => sub { show($_[0]->get("${P}missing")) }],
    [set_100k => sub { $_[0]->set("${P}v100k", $big100) }],
    [get_100k => sub { show($_[0]->get("${P}v100k")) }],
    [set_900k => sub { $_[0]->set("${P}v900k", $big900) }],
    [get_900k => sub { show($_[0]->get("${P}v900k")) }],
    [set_empty => sub { $_[0]->set("${P}empty", '') }],
    [get_empty => sub { show($_[0]->get("${P}empty")) }],
    [set_binary => sub { $_[0]->set("${P}binary", $nasty) }],
    [get_binary => sub { show($_[0]->get("${P}binary")) }],
    [get_multi_big => sub { multi_result($_[0]->get_multi("${P}small", "${P}v100k", "${P}v900k", "${P}missing")) }],
    [set_multi_keys => sub {
        my $c = shift;
        [map { $c->set($multi[$_], "mv$_") } grep { $_ % 5 } 0 .. 49];
    }],
    [get_multi_50 => sub { multi_result($_[0]->get_multi(@multi)) }],
    [set_multi => sub { [$_[0]->set_multi(["${P}sm1", 'one'], ["${P}sm2", 'two'], ["${P}sm3", 'three', TTL])] }],
    [get_set_multi => sub { multi_result($_[0]->get_multi("${P}sm1", "${P}sm2", "${P}sm3")) }],
    [add_existing => sub { $_[0]->add("${P}small", 'other') }],
    [add_new => sub { $_[0]->add("${P}add_new", 'fresh') }],
    [get_add_new => sub { show($_[0]->get("${P}add_new")) }],
    [replace_existing => sub { $_[0]->replace("${P}small", 'replaced') }],
    [replace_missing => sub { $_[0]->replace("${P}replace_missing", 'x') }],
    [get_replaced => sub { show($_[0]->get("${P}small")) }],
    [set_append => sub { $_[0]->set("${P}append", 'mid') }],
    [append => sub { $_[0]->append("${P}append", '_end') }],
    [prepend => sub { $_[0]->prepend("${P}append", 'start_') }],
    [get_append => sub { show($_[0]->get("${P}append")) }],
    [append_missing => sub { $_[0]->append("${P}append_missing", 'x') }],
    [prepend_missing => sub { $_[0]->prepend("${P}append_missing", 'x') }],
    [set_counter => sub { $_[0]->set("${P}counter", '10') }],
    [incr => sub { $_[0]->incr("${P}counter", 5) }],
    [decr => sub { $_[0]->decr("${P}counter", 3) }],
    [decr_below_zero => sub { $_[0]->decr("${P}counter", 100) }],
    [get_counter => sub { show($_[0]->get("${P}counter")) }],
    [incr_missing => sub { $_[0]->incr("${P}counter_missing", 1) }],
    [decr_missing => sub { $_[0]->decr("${P}counter_missing", 1) }],
    [incr_multi => sub { [$_[0]->incr_multi(["${P}counter", 2], "${P}counter_missing", ["${P}append", 1])] }],
    # Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
    [set_counter_large => sub { $_[0]->set("${P}counter", '9223372036854775806') }],
    [incr_large => sub { $_[0]->incr("${P}counter", 1) }],
    [delete_existing => sub { $_[0]->delete("${P}small") }],
    [get_deleted => sub { show($_[0]->get("${P}small")) }],
    [delete_missing => sub { $_[0]->delete("${P}small") }],
    [delete_multi => sub { [$_[0]->delete_multi("${P}sm1", "${P}missing", "${P}sm2")] }],
    [set_touch => sub { $_[0]->set("${P}touch", 't') }],
    [touch => sub { $_[0]->touch("${P}touch", TTL) }],
    [touch_missing => sub { $_[0]->touch("${P}touch_missing", TTL) }],
    [gat => sub { show($_[0]->gat(TTL, "${P}touch")) }],
    [gat_missing => sub { show($_[0]->gat(TTL, "${P}touch_missing")) }],
    [get_touched => sub { show($_[0]->get("${P}touch")) }],
    [set_cas => sub { $_[0]->set("${P}cas", 'c0') }],
    [gets => sub {
        my ($c, $s) = @_;
        my $r = $c->gets("${P}cas");
        $s->{token} = $r ? $r->[0] : undef;
        return [$r ? show($r->[1]) : undef, defined $s->{token} ? 1 : 0];
    }],
    [cas_ok => sub { $_[0]->cas("${P}cas", $_[1]{token}, 'c1') }],
    [cas_conflict => sub { $_[0]->cas("${P}cas", $_[1]{token}, 'c2') }],
    [get_cas => sub { show($_[0]->get("${P}cas")) }],
    [gets_multi => sub {
        my $r = $_[0]->gets_multi("${P}cas", "${P}missing", "${P}append");
        return { map { substr($_, length $P) => [show($r->{$_}[1]), defined $r->{$_}[0] ? 1 : 0] } keys %$r };
    }],
    [delete_cas => sub { $_[0]->delete("${P}cas") }],
    [cas_missing => sub { $_[0]->cas("${P}cas", $_[1]{token}, 'c3') }],
    [set_maxkey => sub { $_[0]->set($maxkey, 'longest key') }],
    [get_maxkey => sub { show($_[0]->get($maxkey)) }],
    [get_multi_maxkey => sub { multi_result($_[0]->get_multi($maxkey, "${P}v100k")) }],
    [set_ttl => sub { $_[0]->set("${P}ttl", 'short', TTL) }],
    [get_ttl_before => sub { show($_[0]->get("${P}ttl")) }],
    [sleep => undef],
    [get_ttl_after => sub { show($_[0]->get("${P}ttl")) }],
    [get_touched_after => sub { show($_[0]->get("${P}touch")) }],
    [get_set_multi_after => sub { multi_result($_[0]->get_multi("${P}sm3")) }],
    [nowait_ops => sub {
        # nowait mode: calls in void context send without waiting, the
        # replies are read later; then a get that must see them all.
        my $n = $_[1]{nowait};
        $n->set("${P}nr1", 'a');
        $n->set("${P}nr2", 'b');
        $n->delete("${P}nr2");
        $n->set("${P}nr3", '10');
        $n->incr("${P}nr3", 5);
        $n->append("${P}nr1", 'z');
        $n->nowait_push;
        return multi_result($n->get_multi("${P}nr1", "${P}nr2", "${P}nr3"));
    }],
    [sequential_500 => sub {
        my $c = shift;
        my $good = 0;
        for my $i (0 .. 499) {
            $good++ if $c->set("${P}seq$i", "s$i") && ($c->get("${P}seq$i") // '') eq "s$i";
        }
        return $good;
    }],
);

$| = 1;
my $json = JSON::PP->new->canonical;
my @clients = map { client($_) } @addrs;
my @states = map { { nowait => client($_, 1) } } @addrs;
for my $step (@steps) {
    my ($name, $fn) = @$step;
    if (!$fn) {
        sleep(TTL_SLEEP);
        next;
    }
    for my $t (0 .. $#clients) {
        my $r = eval { $fn->($clients[$t], $states[$t]) };
        $r = { error => "$@" =~ s/ at .*//sr } if $@;
        print $json->encode({ t => $t, op => $name, r => $r }), "\n";
    }
}
