//! What the ACK and VPC APIs would refuse, or what would leave an ACK cluster without what the
//! rest of the profile relies on, beyond the checks every cloud shares. Name and CIDR shapes are
//! the schema's job; these look across fields.

use super::{Alibaba, Ipv4Cidr};
use crate::base::codes;
use crate::base::diagnostic::Findings;
use crate::base::pointer::ptr;
use crate::profile::Profile;
use std::net::Ipv4Addr;

/// First and last address of a CIDR block (the schema has checked its shape).
fn range(cidr: &Ipv4Cidr) -> Option<(u32, u32)> {
    let (addr, len) = cidr.split_once('/')?;
    let addr = u32::from(addr.parse::<Ipv4Addr>().ok()?);
    let len: u32 = len.parse().ok()?;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    Some((addr & mask, (addr & mask) | !mask))
}

fn overlap(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

pub(super) fn run(a: &Alibaba, _p: &Profile, out: &mut Findings) {
    if let (Some(vpc), Some(vsw)) = (range(&a.vpc.cidr), range(&a.vpc.vswitch_cidr))
        && !(vpc.0 <= vsw.0 && vsw.1 <= vpc.1)
    {
        out.report(
            &codes::VSWITCH_OUTSIDE_VPC,
            &ptr!["alibaba", "vpc", "vswitchCidr"],
            format!(
                "vSwitch CIDR {} is not inside VPC CIDR {}: CreateVSwitch refuses it",
                a.vpc.vswitch_cidr, a.vpc.cidr
            ),
            Some(format!("pick a block inside {}", a.vpc.cidr)),
        );
    }
    let vpc = range(&a.vpc.cidr);
    let pods = range(&a.cluster.container_cidr);
    let services = range(&a.cluster.service_cidr);
    for (field, block, other, other_name) in [
        ("containerCidr", pods, vpc, a.vpc.cidr.as_str()),
        ("serviceCidr", services, vpc, a.vpc.cidr.as_str()),
        (
            "serviceCidr",
            services,
            pods,
            a.cluster.container_cidr.as_str(),
        ),
    ] {
        if let (Some(b), Some(o)) = (block, other)
            && overlap(b, o)
        {
            out.report(
                &codes::CIDR_OVERLAP,
                &ptr!["alibaba", "cluster", field],
                format!("`{field}` overlaps {other_name}: pod, service and VPC addresses must not collide"),
                Some("pick blocks that do not overlap, e.g. 172.20.0.0/16 for pods and 172.21.0.0/20 for services with a 192.168.0.0/16 VPC".into()),
            );
        }
    }
    for (i, np) in a.node_pools.iter().enumerate() {
        if np.count.is_some() && np.autoscale.is_some() {
            out.report(
                &codes::COUNT_WITH_AUTOSCALE,
                &ptr!["alibaba", "nodePools", i, "count"],
                format!(
                    "node pool `{}` autoscales; ACK sizes it between min and max and `count` is not sent",
                    np.name
                ),
                Some("remove `count`".into()),
            );
        }
    }
}
